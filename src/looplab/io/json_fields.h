// Field lists: a struct's JSON keys and members declared once, from which both its to_json and
// its from_json are made, so that adding a field to a report is one line. nlohmann's own
// NLOHMANN_DEFINE_TYPE_* macros do the same, but they name each key after its member, cannot
// read a key that an earlier schema version named otherwise, and read through get<>, which
// turns 1.5 into 1 silently; these read through json_reader (typed, each error naming its key
// path). No LibTorch.
//
//   template <> struct Fields<Thing> {
//     static constexpr auto list = std::make_tuple(field("count", &Thing::count),
//                                                  renamed("exact", &Thing::exact, "accuracy", 2));
//   };
//   void to_json(json& j, const Thing& t) { write_fields(j, t); }
//   void from_json(const json& j, Thing& t) { read_fields(j, t, version); }
//
// A member that is a std::optional is written only when set and read only when present; a
// member whose type has its own field list is a sub-object; a list of objects is read item by
// item (json_reader::get_each), any other object by its from_json.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "looplab/io/json_reader.h"

namespace looplab::json_fields {

using json = nlohmann::json;

// One field: its key, its member and, where schema versions before `since` wrote it under
// another key, that `old_key`.
template <typename T, typename M>
struct Field {
  const char* key;
  M T::*member;
  const char* old_key = nullptr;
  int since = 0;
};
template <typename T, typename M>
constexpr Field<T, M> field(const char* key, M T::*member) {
  return {key, member};
}
template <typename T, typename M>
constexpr Field<T, M> renamed(const char* key, M T::*member, const char* old_key, int since) {
  return {key, member, old_key, since};
}

// Fields<T>::list, the tuple of T's fields: specialised for each struct that has one.
template <typename T>
struct Fields;

namespace detail {
template <typename T, typename = void>
struct has_fields : std::false_type {};
template <typename T>
struct has_fields<T, std::void_t<decltype(Fields<T>::list)>> : std::true_type {};
template <typename T>
struct is_optional : std::false_type {};
template <typename T>
struct is_optional<std::optional<T>> : std::true_type {};
template <typename T>
struct is_vector : std::false_type {};
template <typename T>
struct is_vector<std::vector<T>> : std::true_type {};
template <typename T>
struct is_map : std::false_type {};
template <typename K, typename V>
struct is_map<std::map<K, V>> : std::true_type {};
template <typename T>
constexpr bool is_object_v = std::is_class_v<T> && !std::is_same_v<T, std::string> && !is_vector<T>::value &&
                             !is_map<T>::value && !is_optional<T>::value;
template <typename T>
struct is_object_list : std::false_type {};
template <typename T>
struct is_object_list<std::vector<T>> : std::bool_constant<is_object_v<T>> {};
}  // namespace detail

template <typename T>
void write_fields(json& j, const T& r);
template <typename T>
void read_fields(const json& j, T& r, int version = 0);

template <typename M>
void write_value(json& j, const char* key, const M& v) {
  if constexpr (detail::is_optional<M>::value) {
    if (v) write_value(j, key, *v);
  } else if constexpr (detail::has_fields<M>::value) {
    write_fields(j[key], v);
  } else {
    j[key] = v;
  }
}

template <typename M>
void read_value(const json& j, const char* key, M& out) {
  using namespace json_reader;
  if constexpr (detail::is_optional<M>::value) {
    out.reset();
    if (j.contains(key)) {
      typename M::value_type v{};
      read_value(j, key, v);
      out = std::move(v);
    }
  } else if constexpr (detail::has_fields<M>::value) {
    get_object(j, key, [&](const json& sub) { read_fields(sub, out); });
  } else if constexpr (detail::is_object_list<M>::value) {
    get_each(j, key, out);
  } else if constexpr (detail::is_object_v<M>) {
    get_one(j, key, out);
  } else {
    get(j, key, out);
  }
}

template <typename T>
void write_fields(json& j, const T& r) {
  j = json::object();
  std::apply([&](const auto&... f) { (write_value(j, f.key, r.*(f.member)), ...); }, Fields<T>::list);
}

// `version`: the file's schema version, which chooses between a field's key and its old key.
template <typename T>
void read_fields(const json& j, T& r, int version) {
  json_reader::need_object(j);
  std::apply(
      [&](const auto&... f) {
        (read_value(j, f.old_key && version > 0 && version < f.since ? f.old_key : f.key, r.*(f.member)), ...);
      },
      Fields<T>::list);
}

}  // namespace looplab::json_fields
