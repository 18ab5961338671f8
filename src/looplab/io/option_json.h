// An options table (util/options.h) as a JSON object: each option under its JSON key
// ("training_iters"), read back typed through json_reader (each error naming its key path).
// An option written since the struct's first file must be there; one added later keeps the
// struct's value when absent; one renamed is read under its old key when the new one is
// absent. No LibTorch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "looplab/io/json_reader.h"
#include "looplab/util/error.h"
#include "looplab/util/options.h"

namespace looplab {

template <typename S>
nlohmann::json options_to_json(const OptionTable<S>& table, const S& s) {
  nlohmann::json j = nlohmann::json::object();
  for (const Option<S>& o : table) {
    std::visit([&](const auto& x) { j[o.json_key()] = x; }, o.get(s));
  }
  return j;
}

// Reads the table's options of `j` into `s` (which holds the defaults).
template <typename S>
void options_from_json(const OptionTable<S>& table, const nlohmann::json& j, S& s) {
  using namespace json_reader;
  need_object(j);
  for (const Option<S>& o : table) {
    std::string key = o.json_key();
    if (!j.contains(key) && !o.old_key.empty() && j.contains(o.json_old_key())) key = o.json_old_key();
    if (!j.contains(key) && !o.in_first_file) continue;
    // Typed by json_reader, then set through the table line; the line's own error (an int64
    // option given 2^63) becomes a KeyError naming the key.
    auto read = [&](auto v) {
      get(j, key, v);
      try {
        o.set(s, v);
      } catch (const Error& e) {
        throw KeyError(key, e.what());
      }
    };
    switch (o.kind) {
      case OptionKind::kInt: read(int64_t{}); break;
      case OptionKind::kUnsigned: read(uint64_t{}); break;
      case OptionKind::kNumber: read(double{}); break;
      case OptionKind::kFlag: read(bool{}); break;
      case OptionKind::kText: read(std::string{}); break;
      case OptionKind::kList: read(std::vector<std::string>{}); break;
    }
  }
}

}  // namespace looplab
