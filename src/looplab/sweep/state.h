// Where each run of a sweep stands, from its folder alone (so that a killed sweep, a SLURM
// array and `sweep plan` all agree): done when its done file exists, failed when its failed
// file does, running while a process holds its lock, pending otherwise. No LibTorch.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "looplab/sweep/sweep_file.h"

namespace looplab::sweep {

inline constexpr const char* kDoneFile = "sweep_done.json";      // written last, after eval and analysis
inline constexpr const char* kFailedFile = "sweep_failed.json";  // {"error": ...} of the last attempt
inline constexpr const char* kLockFile = "sweep.lock";           // flock'd by the process running it
inline constexpr const char* kLogFile = "sweep.log";             // the run's output, appended per attempt

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
