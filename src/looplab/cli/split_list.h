// "val,hard" -> {"val", "hard"}: the comma-separated lists of the command line (empty items dropped).
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace looplab::cli {

inline std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace looplab::cli
