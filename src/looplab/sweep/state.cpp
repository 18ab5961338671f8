#include "looplab/sweep/state.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "looplab/io/atomic_file.h"
#include "looplab/io/json_file.h"
#include "looplab/io/json_reader.h"
#include "looplab/run/run_folder.h"
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
  write_file_atomic(dir + "/" + RunFolder::kSweepDone,
                    nlohmann::json{{"schema_version", 1}, {"seconds", seconds}}.dump(2) + "\n");
}

void mark_failed(const std::string& dir, const std::string& error) {
  write_file_atomic(dir + "/" + RunFolder::kSweepFailed,
                    nlohmann::json{{"schema_version", 1}, {"error", error}}.dump(2) + "\n");
}

RunStatus run_status(const Sweep& sw, const Run& run) {
  const std::string dir = sw.run_folder(run);
  RunStatus st;
  if (!fs::exists(dir)) return st;
  if (fs::exists(dir + "/" + RunFolder::kMetrics)) {
    const std::string text = read_file(dir + "/" + RunFolder::kMetrics);
    for (char c : text) st.epochs_done += c == '\n';
  }
  if (fs::exists(dir + "/" + RunFolder::kSweepDone)) {
    st.state = State::kDone;
    return st;
  }
  // The lock first: a run being retried still has its old failed file until it ends.
  if (fs::exists(dir + "/" + RunFolder::kSweepLock) && !RunLock::try_acquire(dir)) {
    st.state = State::kRunning;
    return st;
  }
  if (fs::exists(dir + "/" + RunFolder::kSweepFailed)) {
    st.state = State::kFailed;
    try {
      const std::string file = dir + "/" + RunFolder::kSweepFailed;
      st.error = json_reader::read_typed<std::string>(parse_json(read_file(file), file), file, [](const nlohmann::json& j) {
        std::string error;
        json_reader::read_schema_version(j, 1);
        json_reader::get(j, "error", error);
        return error;
      });
    } catch (const std::exception& e) {
      st.error = std::string("(unreadable ") + RunFolder::kSweepFailed + ": " + e.what() + ")";
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

std::string plan_text(const Sweep& sw) {
  char line[1024];
  std::snprintf(line, sizeof line, "sweep %s: %zu runs in %s\n%5s  %-8s %-9s %s\n", sw.name.c_str(), sw.runs.size(),
                sw.out.c_str(), "index", "state", "epochs", "run");
  std::string out = line;
  int64_t counts[4] = {0, 0, 0, 0};
  for (const Run& r : sw.runs) {
    const RunStatus st = run_status(sw, r);
    ++counts[static_cast<int>(st.state)];
    const std::string epochs = std::to_string(st.epochs_done) + "/" + std::to_string(r.spec.train.epochs);
    std::snprintf(line, sizeof line, "%5lld  %-8s %-9s ", static_cast<long long>(r.index), state_name(st.state),
                  epochs.c_str());
    out += line + r.name + (st.error.empty() ? "" : "  error: " + st.error) + "\n";
  }
  std::snprintf(line, sizeof line, "%lld pending, %lld running, %lld done, %lld failed\n",
                static_cast<long long>(counts[0]), static_cast<long long>(counts[1]), static_cast<long long>(counts[2]),
                static_cast<long long>(counts[3]));
  return out + line;
}

std::unique_ptr<RunLock> RunLock::try_acquire(const std::string& dir) {
  make_directories(dir);
  const std::string path = dir + "/" + RunFolder::kSweepLock;
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
