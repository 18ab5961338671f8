// One run of a sweep from start to end, as `looplab sweep exec FILE --index I` runs it (a
// worker of the local pool, or one task of a SLURM array): train, or resume from the last
// completed epoch; evaluate; analyse; mark done. Safe to start again at any moment and from
// any number of processes: the run's lock lets one of them work, the others return at once.
#pragma once

#include <string>

#include "looplab/distributed/ranks.h"
#include "looplab/sweep/sweep_file.h"

namespace looplab::sweep {

enum class ExecResult { kDone, kBusy };  // kBusy: another process holds the run

// Records an error in the run's failed file and throws it on. On several ranks (a SLURM task
// with --ntasks, docs/distributed.md) all of them train; rank 0 alone holds the lock,
// evaluates, analyses and records.
ExecResult execute_run(const Sweep& sw, int64_t index, const std::string& device, Ranks& ranks);
ExecResult execute_run(const Sweep& sw, int64_t index, const std::string& device);

}  // namespace looplab::sweep
