#include "looplab/io/csv.h"

#include "looplab/util/error.h"

namespace looplab {

namespace {

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t comma = line.find(',', start);
    out.push_back(line.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

}  // namespace

CsvReader::CsvReader(std::string path, std::string text, const std::vector<std::string>& required)
    : CsvReader(std::move(path), LineReader::from_string(std::move(text)), required) {}

CsvReader CsvReader::open(const std::string& path, const std::vector<std::string>& required) {
  return CsvReader(path, LineReader::open(path), required);
}

CsvReader::CsvReader(std::string path, LineReader lines, const std::vector<std::string>& required)
    : path_(std::move(path)), lines_(std::move(lines)), required_(required) {
  std::string line;
  if (!lines_.next(line)) throw Error(path_ + ": empty file (expected a header line)");
  line_ = 1;
  header_ = split(line);
  for (const std::string& name : required_) {
    size_t i = 0;
    while (i < header_.size() && header_[i] != name) ++i;
    if (i == header_.size()) {
      std::string want;
      for (const auto& r : required_) want += (want.empty() ? "" : ",") + r;
      throw Error(path_ + ":1: header must name the columns " + want + ", got '" + line + "'");
    }
    index_.push_back(i);
  }
}

bool CsvReader::next() {
  std::string line;
  do {
    if (!lines_.next(line)) return false;
    ++line_;
  } while (line.empty());
  fields_ = split(line);
  return true;
}

const std::string& CsvReader::field(const std::string& column) const {
  for (size_t k = 0; k < required_.size(); ++k)
    if (required_[k] == column) {
      if (index_[k] >= fields_.size())
        throw Error(where() + ": missing field '" + column + "' (" + std::to_string(fields_.size()) + " of " +
                    std::to_string(header_.size()) + " fields)");
      return fields_[index_[k]];
    }
  throw Error("CsvReader: '" + column + "' is not a required column");  // a programming error
}

}  // namespace looplab
