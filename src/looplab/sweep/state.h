// Where each run of a sweep stands, from its folder alone (so that a killed sweep, a SLURM
// array and `sweep plan` all agree): done when its done file exists, failed when its failed
// file does, running while a process holds its lock, pending otherwise. No LibTorch.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "looplab/run/run_folder.h"
#include "looplab/sweep/sweep_file.h"

namespace looplab::sweep {

// A run's files (run/run_folder.h names them):
//   RunFolder::kSweepDone    written last, after eval and analysis: {"schema_version", "seconds"};
//   RunFolder::kSweepFailed  {"schema_version", "error"} of the last attempt;
//   RunFolder::kSweepLock    flock'd by the process running it;
//   RunFolder::kSweepLog     the run's output, appended per attempt.
// The done and failed files, written atomically.
void mark_done(const std::string& dir, double seconds);
void mark_failed(const std::string& dir, const std::string& error);

enum class State { kPending, kRunning, kDone, kFailed };
const char* state_name(State s);

struct RunStatus {
  State state = State::kPending;
  int64_t epochs_done = 0;  // lines of metrics.jsonl
  std::string error;        // failed: the recorded error
};
RunStatus run_status(const Sweep& sw, const Run& run);
// The indices of the runs not done (what a pool or a SLURM array has left to run).
std::vector<int64_t> runs_not_done(const Sweep& sw);

// `looplab sweep plan`: a line per run (index, state, epochs done of planned, folder name, any
// recorded error) between a heading and the counts of each state.
std::string plan_text(const Sweep& sw);

// An exclusive lock on a run folder's lock file, released when this object goes or the
// process dies (flock), so a kill -9 never leaves a run marked as running.
class RunLock {
 public:
  // nullptr when another process holds it.
  static std::unique_ptr<RunLock> try_acquire(const std::string& dir);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  explicit RunLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace looplab::sweep
