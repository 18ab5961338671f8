// Typed reading of looplab's JSON files, the one mechanism for config.json, training.json, the
// reports (run/reports.h), the sweep state files, eval.partial.json and a sweep's report.json.
// Each value must have the member's JSON type: nlohmann's get<> turns 1.5 into 1 silently and
// names no key. An error is a KeyError that knows its key path ("splits/val/count");
// read_typed turns it into a looplab::Error naming the file too. No LibTorch.
//
//   void from_json(const json& j, Thing& t) { need_object(j); get(j, "count", t.count); ... }
//   Thing t = read_typed<Thing>(read_json_file(path), path);
//     -> "DIR/thing.json: key 'count': expected an integer, got 1.5"
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "looplab/util/error.h"

namespace looplab::json_reader {

using json = nlohmann::json;

// A missing, ill-typed or unacceptable value, as a nlohmann::json::exception (from_json's
// contract, so that j.get<T>() passes it on) that knows the key path.
class KeyError : public json::exception {
 public:
  KeyError(const std::string& key, const std::string& why);
  const std::string& key() const { return key_; }
  const std::string& why() const { return why_; }

 private:
  std::string key_, why_;
};

// Runs `read` on the value at `key`, prefixing `key` to the key path of any error inside; a
// looplab::Error inside (a library's parser of the value) becomes a KeyError at `key`.
template <typename Read>
void nested(const std::string& key, Read&& read) {
  try {
    read();
  } catch (const KeyError& e) {
    throw KeyError(e.key().empty() ? key : key + "/" + e.key(), e.why());
  } catch (const json::exception& e) {  // a from_json of nlohmann's own
    throw KeyError(key, e.what());
  } catch (const Error& e) {
    throw KeyError(key, e.what());
  }
}

std::string shown(const json& v);  // the value as JSON, cut to 40 characters
void need_object(const json& j);   // throws KeyError unless j is an object
// The value at `key` (a KeyError "missing" otherwise); call it inside nested(key, ...).
const json& at(const json& j, const std::string& key);

// Value readers. A double reads from any number, and from null: nlohmann writes NaN and the
// infinities as null, so that they come back (as NaN).
int64_t as_int(const json& v);
uint64_t as_unsigned(const json& v);  // an integer >= 0
double as_double(const json& v);
bool as_bool(const json& v);
std::string as_string(const json& v);
template <typename T, typename As>
std::vector<T> as_list(const json& v, As&& as) {
  if (!v.is_array()) throw KeyError("", "expected a list, got " + shown(v));
  std::vector<T> out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) nested(std::to_string(i), [&] { out.push_back(as(v[i])); });
  return out;
}

// out = the value at key, of out's type.
void get(const json& j, const std::string& key, int64_t& out);
void get(const json& j, const std::string& key, uint64_t& out);
void get(const json& j, const std::string& key, int& out);
void get(const json& j, const std::string& key, double& out);
void get(const json& j, const std::string& key, bool& out);
void get(const json& j, const std::string& key, std::string& out);
void get(const json& j, const std::string& key, std::vector<int64_t>& out);
void get(const json& j, const std::string& key, std::vector<double>& out);
void get(const json& j, const std::string& key, std::vector<std::string>& out);
// An object of named values, each read by its from_json.
template <typename T>
void get(const json& j, const std::string& key, std::map<std::string, T>& out) {
  nested(key, [&] {
    const json& m = at(j, key);
    need_object(m);
    out.clear();
    for (auto it = m.begin(); it != m.end(); ++it) nested(it.key(), [&] { from_json(it.value(), out[it.key()]); });
  });
}
// A list of objects, each read by its from_json.
template <typename T>
void get_each(const json& j, const std::string& key, std::vector<T>& out) {
  nested(key, [&] {
    const json& v = at(j, key);
    if (!v.is_array()) throw KeyError("", "expected a list, got " + shown(v));
    out.assign(v.size(), T{});
    for (size_t i = 0; i < v.size(); ++i) nested(std::to_string(i), [&] { from_json(v[i], out[i]); });
  });
}
// One object read by its from_json.
template <typename T>
void get_one(const json& j, const std::string& key, T& out) {
  nested(key, [&] { from_json(at(j, key), out); });
}
// Leaves `out` as it is when the key is absent (a key added in a later schema version).
template <typename T>
void get_optional(const json& j, const std::string& key, T& out) {
  if (j.contains(key)) get(j, key, out);
}
// A sub-object read by `read(sub)`.
template <typename Read>
void get_object(const json& j, const std::string& key, Read&& read) {
  nested(key, [&] {
    const json& sub = at(j, key);
    need_object(sub);
    read(sub);
  });
}

// j's "schema_version" (or `old_key`, the name an earlier version gave it), 1 when absent (a
// file from before versions); a KeyError unless 1 <= version <= newest.
int read_schema_version(const json& j, int newest, const std::string& old_key = "");

// read(j) with any KeyError or nlohmann error as a looplab::Error "SOURCE: key 'a/b': why".
template <typename T, typename Read>
T read_typed(const json& j, const std::string& source, Read&& read) {
  try {
    return read(j);
  } catch (const json::exception& e) {
    throw Error(source + ": " + e.what());
  }
}
// The same through T's from_json.
template <typename T>
T read_typed(const json& j, const std::string& source) {
  return read_typed<T>(j, source, [](const json& v) { return v.get<T>(); });
}

}  // namespace looplab::json_reader
