#include "looplab/sweep/pool.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "looplab/io/atomic_file.h"
#include "looplab/sweep/state.h"
#include "looplab/util/error.h"

namespace looplab::sweep {

namespace fs = std::filesystem;

namespace {

pid_t spawn(const std::vector<std::string>& args, const std::string& log) {
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw Error("sweep: fork failed");
  if (pid > 0) return pid;
  // The child: dies with the pool, writes to the run's log.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(125);
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd >= 0) {
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::close(fd);
  }
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execv(argv[0], argv.data());
  std::fprintf(stderr, "sweep: cannot run %s\n", argv[0]);
  ::_exit(126);
}

std::string clock_text(double s) {
  char buf[32];
  const long long t = static_cast<long long>(s + 0.5);
  if (t >= 3600) std::snprintf(buf, sizeof buf, "%lldh%02lldm", t / 3600, t / 60 % 60);
  else std::snprintf(buf, sizeof buf, "%lldm%02llds", t / 60, t % 60);
  return buf;
}

}  // namespace

int64_t run_pool(const Sweep& sw, const PoolOptions& o) {
  if (o.workers < 1 || o.threads_per_run < 1) throw Error("sweep run: --workers and --threads-per-run must be >= 1");
  const std::string self = o.self.empty() ? fs::read_symlink("/proc/self/exe").string() : o.self;
  const std::vector<int64_t> todo = runs_not_done(sw);
  int64_t done = static_cast<int64_t>(sw.runs.size() - todo.size());
  const int64_t total = static_cast<int64_t>(sw.runs.size()), already = done;
  std::map<pid_t, int64_t> running;
  int64_t failed = 0;
  size_t next = 0;
  const bool tty = ::isatty(2);
  const auto start = std::chrono::steady_clock::now();
  double finished_seconds = 0;  // wall time of the runs this pool finished
  std::map<int64_t, std::chrono::steady_clock::time_point> started;
  auto show = [&](const std::string& event) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const int64_t left = total - done - failed;
    std::string eta = "?";
    if (done > already) eta = clock_text(finished_seconds / static_cast<double>(done - already) *
                                         static_cast<double>(left) / static_cast<double>(o.workers));
    std::fprintf(stderr, "%ssweep %s: %lld/%lld done, %zu running, %lld failed, %lld pending; %s elapsed, ~%s left%s%s",
                 tty ? "\r" : "", sw.name.c_str(), static_cast<long long>(done), static_cast<long long>(total),
                 running.size(), static_cast<long long>(failed),
                 static_cast<long long>(left - static_cast<int64_t>(running.size())), clock_text(elapsed).c_str(),
                 eta.c_str(), event.empty() ? "" : "  ", event.c_str());
    std::fprintf(stderr, tty && event.empty() ? "   " : "\n");
    std::fflush(stderr);
  };
  show("");
  while (next < todo.size() || !running.empty()) {
    while (next < todo.size() && static_cast<int64_t>(running.size()) < o.workers) {
      const Run& r = sw.runs[static_cast<size_t>(todo[next++])];
      const std::string dir = sw.run_folder(r);
      make_directories(dir);
      const pid_t pid = spawn({self, "--threads", std::to_string(o.threads_per_run), "sweep", "exec", sw.file, "--index",
                               std::to_string(r.index), "--device", o.device},
                              dir + "/" + RunFolder::kSweepLog);
      running[pid] = r.index;
      started[r.index] = std::chrono::steady_clock::now();
      show("started: " + r.name);
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      static int ticks = 0;
      if (tty && ++ticks % 5 == 0) show("");
      continue;
    }
    const auto it = running.find(pid);
    if (it == running.end()) continue;
    const Run& r = sw.runs[static_cast<size_t>(it->second)];
    running.erase(it);
    const std::string dir = sw.run_folder(r);
    const RunStatus st = run_status(sw, r);
    if (st.state == State::kDone) {
      ++done;
      finished_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started[r.index]).count();
      show("done: " + r.name);
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      show("busy elsewhere: " + r.name);  // another process holds it; not ours to count
    } else {
      ++failed;
      if (!fs::exists(dir + "/" + RunFolder::kSweepFailed)) {  // killed before it could say why
        const std::string why = WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                                    : "exited with status " + std::to_string(WEXITSTATUS(status));
        mark_failed(dir, why);
      }
      show("FAILED: " + r.name + " (" + run_status(sw, r).error + "; log " + dir + "/" + RunFolder::kSweepLog + ")");
    }
  }
  return failed;
}

}  // namespace looplab::sweep
