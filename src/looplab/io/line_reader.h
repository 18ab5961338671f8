// Lines of a text file read in chunks, plain or zstd-compressed (recognised by the zstd magic
// number, whatever the file's name), so a multi-gigabyte puzzle database is never held whole.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

namespace looplab {

class LineReader {
 public:
  // Throws looplab::Error naming the file if it is missing or unreadable.
  static LineReader open(const std::string& path);
  static LineReader from_string(std::string text);
  LineReader(LineReader&&) noexcept;
  LineReader& operator=(LineReader&&) noexcept;
  ~LineReader();

  // The next line without its "\n" or "\r\n"; false at the end. A corrupt or truncated
  // compressed stream is a looplab::Error naming the file.
  bool next(std::string& line);
  bool compressed() const;

 private:
  struct State;
  explicit LineReader(std::unique_ptr<State> state);
  bool refill();
  std::unique_ptr<State> s_;
};

}  // namespace looplab
