#include "looplab/sweep/state.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "looplab/io/atomic_file.h"
#include "looplab/run/run_dir.h"
#include "looplab/util/error.h"

namespace looplab::sweep {

namespace fs = std::filesystem;

const char* state_name(State s) {
  switch (s) {
    case State::kPending: return "pending";
    case State::kRunning: return "running";
    case State::kDone: return "done";
    case State::kFailed: return "failed";
  }
  return "?";
}

void mark_done(const std::string& dir, double seconds) {
  write_file_atomic(dir + "/" + RunDir::kSweepDone,
                    nlohmann::json{{"schema_version", 1}, {"seconds", seconds}}.dump(2) + "\n");
}

void mark_failed(const std::string& dir, const std::string& error) {
  write_file_atomic(dir + "/" + RunDir::kSweepFailed,
                    nlohmann::json{{"schema_version", 1}, {"error", error}}.dump(2) + "\n");
}

RunStatus run_status(const Sweep& sw, const Run& run) {
  const std::string dir = sw.run_dir(run);
  RunStatus st;
  if (!fs::exists(dir)) return st;
  if (fs::exists(dir + "/" + RunDir::kMetrics)) {
    const std::string text = read_file(dir + "/" + RunDir::kMetrics);
    for (char c : text) st.epochs_done += c == '\n';
  }
  if (fs::exists(dir + "/" + RunDir::kSweepDone)) {
    st.state = State::kDone;
    return st;
  }
  // The lock first: a run being retried still has its old failed file until it ends.
  if (fs::exists(dir + "/" + RunDir::kSweepLock) && !RunLock::try_acquire(dir)) {
    st.state = State::kRunning;
    return st;
  }
  if (fs::exists(dir + "/" + RunDir::kSweepFailed)) {
    st.state = State::kFailed;
    try {
      st.error = nlohmann::json::parse(read_file(dir + "/" + RunDir::kSweepFailed)).value("error", "");
    } catch (const std::exception& e) {
      st.error = std::string("(unreadable ") + RunDir::kSweepFailed + ": " + e.what() + ")";
    }
  }
  return st;
}

std::vector<int64_t> runs_not_done(const Sweep& sw) {
  std::vector<int64_t> out;
  for (const Run& r : sw.runs)
    if (run_status(sw, r).state != State::kDone) out.push_back(r.index);
  return out;
}

std::unique_ptr<RunLock> RunLock::try_acquire(const std::string& dir) {
  make_directories(dir);
  const std::string path = dir + "/" + RunDir::kSweepLock;
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(path + ": cannot open the run's lock file");
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return nullptr;
  }
  return std::unique_ptr<RunLock>(new RunLock(fd));
}

RunLock::~RunLock() {
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
}

}  // namespace looplab::sweep
