// Progress of long work on stderr: a line redrawn in place on a terminal, a plain line per
// tenth of the work otherwise (so logs stay short).
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace looplab {

class Progress {
 public:
  explicit Progress(std::string what) : what_(std::move(what)), tty_(::isatty(2)) {}

  void operator()(int64_t done, int64_t total) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const int tenth = total > 0 ? static_cast<int>(10 * done / total) : 10;
    if (!tty_ && tenth == last_tenth_) return;
    last_tenth_ = tenth;
    std::fprintf(stderr, "%s%s: %lld/%lld (%.0f%%), %.0f per second%s", tty_ ? "\r" : "", what_.c_str(),
                 static_cast<long long>(done), static_cast<long long>(total), total ? 100.0 * done / total : 100.0,
                 s > 0 ? done / s : 0.0, tty_ && done < total ? "   " : "\n");
    std::fflush(stderr);
  }
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  std::string what_;
  bool tty_;
  int last_tenth_ = -1;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace looplab
