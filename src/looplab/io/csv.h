// Reading the simple CSV files of looplab's tasks (no quoted fields: none of the formats we read
// uses them) with the line numbers every error message needs. A hand-written reader because the
// Debian CSV libraries either do not report line numbers or pull in much more than a split.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "looplab/io/line_reader.h"

namespace looplab {

class CsvReader {
 public:
  // `text` is the file's content, `path` names it in errors. The first line is the header; it
  // must name every column of `required` (in any order, extra columns allowed).
  CsvReader(std::string path, std::string text, const std::vector<std::string>& required);
  // The same, reading the file (plain or zstd-compressed) in chunks as rows are asked for.
  static CsvReader open(const std::string& path, const std::vector<std::string>& required);

  // The next non-empty row; false at the end. A row whose field count differs from the
  // header's is reported by row_error().
  bool next();
  const std::string& field(const std::string& column) const;  // of a required column
  size_t field_count() const { return fields_.size(); }
  size_t column_count() const { return header_.size(); }
  int64_t line() const { return line_; }
  const std::string& path() const { return path_; }
  // "PATH:LINE: why" for the current row.
  std::string where() const { return path_ + ":" + std::to_string(line_); }

 private:
  CsvReader(std::string path, LineReader lines, const std::vector<std::string>& required);
  std::string path_;
  LineReader lines_;
  int64_t line_ = 0;
  std::vector<std::string> header_, required_, fields_;
  std::vector<size_t> index_;  // column of each required name
};

}  // namespace looplab
