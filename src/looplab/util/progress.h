// Progress of long work on stderr, the one display every command uses: a line redrawn in place
// on a terminal; elsewhere (a log file) a plain line per tenth of the work, or nothing for work
// that already prints a line per step of its own (an epoch). No LibTorch.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace looplab {

class Progress {
 public:
  enum class Log { kTenths, kNone };  // what a non-terminal gets
  explicit Progress(std::string what, Log log = Log::kTenths)
      : what_(std::move(what)), tty_(::isatty(2)), log_(log) {}

  // `note` follows the counts, e.g. "loss 0.6931".
  void operator()(int64_t done, int64_t total, const std::string& note = "") {
    const double s = seconds();
    const int tenth = total > 0 ? static_cast<int>(10 * done / total) : 10;
    if (!tty_ && (log_ == Log::kNone || tenth == last_tenth_)) return;
    last_tenth_ = tenth;
    std::fprintf(stderr, "%s%s: %lld/%lld (%.0f%%), %.1f per second%s%s%s", tty_ ? "\r" : "", what_.c_str(),
                 static_cast<long long>(done), static_cast<long long>(total), total ? 100.0 * done / total : 100.0,
                 s > 0 ? done / s : 0.0, note.empty() ? "" : ", ", note.c_str(), keep_line(done, total) ? "   " : "\n");
    std::fflush(stderr);
    drawn_ = keep_line(done, total);
  }
  // Removes a line left half-drawn on a terminal (the work ended early or prints next).
  void clear() {
    if (drawn_) std::fprintf(stderr, "\r%100s\r", "");
    drawn_ = false;
  }
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  // On a terminal the line is redrawn until the work is done; a display that shows nothing in
  // logs (Log::kNone) is transient: its last state stays until clear() removes it.
  bool keep_line(int64_t done, int64_t total) const { return tty_ && (done < total || log_ == Log::kNone); }

  std::string what_;
  bool tty_;
  Log log_;
  int last_tenth_ = -1;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace looplab
