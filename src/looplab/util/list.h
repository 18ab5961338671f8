// "val,hard" -> {"val", "hard"}: the comma-separated lists of options (empty items dropped).
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <utility>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "looplab/util/error.h"

namespace looplab {

// {"a", "b", "c"} -> "a, b, c"; with `last`, "a, b" + last + "c".
inline std::string join(const std::vector<std::string>& items, const std::string& sep = ", ",
                        const std::string& last = "") {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i)
    out += (i == 0 ? "" : i + 1 == items.size() && !last.empty() ? last : sep) + items[i];
  return out;
}
// {"a", "b", "c"} -> "a, b or c": names in a help text or a message.
inline std::string join_names(const std::vector<std::string>& names, const std::string& last = " or ") {
  return join(names, ", ", last);
}

inline std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// "0.5,1,2,4" -> {0.5, 1, 2, 4}: every item a finite number > 0, else an error naming `what`.
inline std::vector<double> parse_positive_numbers(const std::string& text, const std::string& what) {
  std::vector<double> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const size_t b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
    item = b == std::string::npos ? "" : item.substr(b, e - b + 1);
    if (item.empty()) throw Error(what + ": empty item in '" + text + "' (want e.g. 0.5,1,2,4)");
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (end != item.c_str() + item.size() || errno == ERANGE)
      throw Error(what + ": '" + item + "' is not a number (want e.g. 0.5,1,2,4)");
    if (!std::isfinite(v) || !(v > 0)) throw Error(what + ": '" + item + "' must be a finite number > 0");
    out.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// "a:b" or "b" (meaning 1:b), 1 <= a <= b: an iteration range. Throws OptionError(option, ...).
inline std::pair<int64_t, int64_t> parse_range(const std::string& s, const std::string& option) {
  long long lo = 1, hi = 0;
  char rest = 0;
  const bool ok = s.find(':') == std::string::npos ? std::sscanf(s.c_str(), "%lld%c", &hi, &rest) == 1
                                                   : std::sscanf(s.c_str(), "%lld:%lld%c", &lo, &hi, &rest) == 2;
  if (!ok || lo < 1 || hi < lo)
    throw OptionError(option, " '" + s + "': expected FIRST:LAST with 1 <= FIRST <= LAST, e.g. 1:500");
  return {lo, hi};
}

}  // namespace looplab
