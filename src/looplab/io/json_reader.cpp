#include "looplab/io/json_reader.h"

#include <limits>

namespace looplab::json_reader {

namespace {

std::string message(const std::string& key, const std::string& why) {
  return key.empty() ? why : "key '" + key + "': " + why;
}

}  // namespace

KeyError::KeyError(const std::string& key, const std::string& why)
    : json::exception(0, message(key, why).c_str()), key_(key), why_(why) {}

std::string shown(const json& v) {
  std::string s = v.dump();
  return s.size() > 40 ? s.substr(0, 37) + "..." : s;
}

void need_object(const json& j) {
  if (!j.is_object()) throw KeyError("", "expected a JSON object, got " + shown(j));
}

const json& at(const json& j, const std::string& key) {
  auto it = j.find(key);
  if (it == j.end()) throw KeyError("", "missing");
  return *it;
}

int64_t as_int(const json& v) {
  if (!v.is_number_integer()) throw KeyError("", "expected an integer, got " + shown(v));
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    throw KeyError("", "integer " + shown(v) + " is too large");
  return v.get<int64_t>();
}
uint64_t as_unsigned(const json& v) {
  if (!v.is_number_integer()) throw KeyError("", "expected an integer, got " + shown(v));
  if (!v.is_number_unsigned() && v.get<int64_t>() < 0) throw KeyError("", "expected an integer >= 0, got " + shown(v));
  return v.get<uint64_t>();
}
double as_double(const json& v) {
  if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (!v.is_number()) throw KeyError("", "expected a number, got " + shown(v));
  return v.get<double>();
}
bool as_bool(const json& v) {
  if (!v.is_boolean()) throw KeyError("", "expected true or false, got " + shown(v));
  return v.get<bool>();
}
std::string as_string(const json& v) {
  if (!v.is_string()) throw KeyError("", "expected a string, got " + shown(v));
  return v.get<std::string>();
}

void get(const json& j, const std::string& key, int64_t& out) {
  nested(key, [&] { out = as_int(at(j, key)); });
}
void get(const json& j, const std::string& key, uint64_t& out) {
  nested(key, [&] { out = as_unsigned(at(j, key)); });
}
void get(const json& j, const std::string& key, int& out) {
  nested(key, [&] {
    const int64_t v = as_int(at(j, key));
    if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
      throw KeyError("", "integer " + std::to_string(v) + " is too large");
    out = static_cast<int>(v);
  });
}
void get(const json& j, const std::string& key, double& out) {
  nested(key, [&] { out = as_double(at(j, key)); });
}
void get(const json& j, const std::string& key, bool& out) {
  nested(key, [&] { out = as_bool(at(j, key)); });
}
void get(const json& j, const std::string& key, std::string& out) {
  nested(key, [&] { out = as_string(at(j, key)); });
}
void get(const json& j, const std::string& key, std::vector<int64_t>& out) {
  nested(key, [&] { out = as_list<int64_t>(at(j, key), as_int); });
}
void get(const json& j, const std::string& key, std::vector<double>& out) {
  nested(key, [&] { out = as_list<double>(at(j, key), as_double); });
}
void get(const json& j, const std::string& key, std::vector<std::string>& out) {
  nested(key, [&] { out = as_list<std::string>(at(j, key), as_string); });
}

int read_schema_version(const json& j, int newest, const std::string& old_key) {
  need_object(j);
  int64_t v = 1;
  if (j.contains("schema_version")) get(j, "schema_version", v);
  else if (!old_key.empty() && j.contains(old_key)) get(j, old_key, v);
  if (v < 1) throw KeyError("schema_version", "expected a positive integer, got " + std::to_string(v));
  if (v > newest)
    throw KeyError("", "schema_version " + std::to_string(v) + " is newer than this looplab reads (" +
                           std::to_string(newest) + ")");
  return static_cast<int>(v);
}

}  // namespace looplab::json_reader
