// An options struct's one table, after LevelDB's options.h: each option's key, member, default
// (the struct's own initializer), range and help in one line, from which the command line's
// flags (cli/commands.h's add_option_flags), a sweep file's keys (sweep/sweep_file.cpp), a run folder's JSON
// (io/option_json.h) and the checks (check_options) are all made. Adding an option to a struct
// that has a table is its member, with its doc comment, and one line of the table:
//
//   option("phantom-damping", &TrainOptions::phantom_damping, "phantom: the damping d", in_half_open(0, 1)),
//
// No LibTorch, no JSON.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "looplab/util/error.h"
#include "looplab/util/numeric.h"

namespace looplab {

// A value as given: an integer (an unsigned one from JSON or a flag whose type is unsigned, so that
// a seed keeps all 64 bits), a number, a string, a flag or a list of strings.
using OptionValue = std::variant<int64_t, uint64_t, double, std::string, bool, std::vector<std::string>>;

// A value as text, the same everywhere it names a run: integers in decimal, numbers in the
// shortest form that reads back the same (3e-4 -> "0.0003"), flags as true/false, lists
// comma-separated.
inline std::string to_text(const OptionValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* u = std::get_if<uint64_t>(&v)) return std::to_string(*u);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* l = std::get_if<std::vector<std::string>>(&v)) {
    std::string out;
    for (const std::string& s : *l) out += (out.empty() ? "" : ",") + s;
    return out;
  }
  return shortest_text(std::get<double>(v));
}

enum class OptionKind { kInt, kUnsigned, kNumber, kText, kFlag, kList };

template <typename S>
struct Option {
  std::string key;      // the flag without "--", the sweep file's key, and (with '_' for '-') the JSON key
  std::string old_key;  // a key it had before, still read (flag, sweep key, JSON); "" if none
  std::string help;
  OptionKind kind = OptionKind::kText;
  // Sets the member from a value; throws looplab::Error when the value has the wrong type
  // ("expected an integer"). Ranges are check's.
  std::function<void(S&, const OptionValue&)> set;
  std::function<OptionValue(const S&)> get;
  // What is wrong with the member's value (" must be >= 1"), "" when nothing; null: any value.
  std::function<std::string(const S&)> complaint;
  std::string json_as;        // the JSON key where it is not the key's own spelling
  bool is_flag = true;        // a command-line flag and a sweep key (false: the file's alone)
  bool in_sweeps = true;      // a sweep file's key too (false: the command line's alone)
  bool in_first_file = true;  // written since the struct's first file: required when read

  // `key` as JSON spells it: "training-iters" -> "training_iters".
  static std::string json_spelling(std::string k) {
    for (char& c : k)
      if (c == '-') c = '_';
    return k;
  }
  std::string json_key() const { return json_as.empty() ? json_spelling(key) : json_as; }
  std::string json_old_key() const { return json_spelling(old_key); }
  bool named(const std::string& k) const { return k == key || (!old_key.empty() && k == old_key); }

  Option&& was(std::string old) && { old_key = std::move(old); return std::move(*this); }
  Option&& file_only() && { is_flag = false; return std::move(*this); }
  Option&& added_later() && { in_first_file = false; return std::move(*this); }
  Option&& in_json_as(std::string k) && { json_as = std::move(k); return std::move(*this); }
  Option&& command_line_only() && { in_sweeps = false; return std::move(*this); }
};

template <typename S>
using OptionTable = std::vector<Option<S>>;

// --- A value of the member's own type from an OptionValue (the wrong type: an Error).
template <typename M>
M option_cast(const OptionValue& v) {
  if constexpr (std::is_same_v<M, int64_t> || std::is_same_v<M, uint64_t>) {
    const auto* i = std::get_if<int64_t>(&v);
    const auto* u = std::get_if<uint64_t>(&v);
    if (!i && !u) throw Error("expected an integer");
    if constexpr (std::is_same_v<M, uint64_t>) {
      if (u) return *u;
      if (*i < 0) throw Error("expected an integer >= 0");
      return static_cast<uint64_t>(*i);
    } else {
      if (u && *u > static_cast<uint64_t>(INT64_MAX)) throw Error("expected an integer below 2^63");
      return u ? static_cast<int64_t>(*u) : *i;
    }
  } else if constexpr (std::is_same_v<M, double>) {
    if (const auto* d = std::get_if<double>(&v)) return *d;
    if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
    if (const auto* u = std::get_if<uint64_t>(&v)) return static_cast<double>(*u);
    throw Error("expected a number");
  } else if constexpr (std::is_same_v<M, bool>) {
    if (const auto* b = std::get_if<bool>(&v)) return *b;
    throw Error("expected true or false");
  } else if constexpr (std::is_same_v<M, std::string>) {
    if (const auto* s = std::get_if<std::string>(&v)) return *s;
    throw Error("expected a string");
  } else {
    static_assert(std::is_same_v<M, std::vector<std::string>>, "an option is an integer, number, text, flag or list");
    if (const auto* l = std::get_if<std::vector<std::string>>(&v)) return *l;
    if (const auto* s = std::get_if<std::string>(&v)) {  // "val,hard"
      std::vector<std::string> out;
      size_t start = 0;
      while (start <= s->size()) {
        const size_t comma = s->find(',', start);
        const size_t end = comma == std::string::npos ? s->size() : comma;
        if (end > start) out.push_back(s->substr(start, end - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      return out;
    }
    throw Error("expected a list of strings");
  }
}

template <typename M>
constexpr OptionKind option_kind() {
  if constexpr (std::is_same_v<M, int64_t>) return OptionKind::kInt;
  if constexpr (std::is_same_v<M, uint64_t>) return OptionKind::kUnsigned;
  if constexpr (std::is_same_v<M, double>) return OptionKind::kNumber;
  if constexpr (std::is_same_v<M, bool>) return OptionKind::kFlag;
  if constexpr (std::is_same_v<M, std::string>) return OptionKind::kText;
  return OptionKind::kList;
}

// --- Ranges: each gives what is wrong with a value, "" when nothing.
template <typename M>
using Range = std::function<std::string(const M&)>;

template <typename M>
Range<M> at_least(M low) {
  return [low](const M& v) { return v >= low ? "" : " must be >= " + to_text(OptionValue(low)); };
}
inline Range<double> positive() {
  return [](const double& v) { return v > 0 ? "" : std::string(" must be positive"); };
}
// [low, high]; `open_low` / `open_high` leave that end out.
inline Range<double> within(double low, double high, bool open_low = false, bool open_high = false) {
  return [=](const double& v) {
    const bool ok = (open_low ? v > low : v >= low) && (open_high ? v < high : v <= high);
    return ok ? "" : " must lie in " + std::string(open_low ? "(" : "[") + shortest_text(low) + ", " +
                         shortest_text(high) + (open_high ? ")" : "]");
  };
}
// One of `names`.
inline Range<std::string> one_of(std::vector<std::string> names) {
  return [names](const std::string& v) {
    for (const std::string& n : names)
      if (v == n) return std::string();
    std::string list;
    for (size_t i = 0; i < names.size(); ++i)
      list += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    return " '" + v + "': expected " + list;
  };
}
// Each item one of `names` (none at all passes).
inline Range<std::vector<std::string>> each_one_of(std::vector<std::string> names) {
  auto one = one_of(std::move(names));
  return [one](const std::vector<std::string>& items) {
    for (const std::string& v : items)
      if (std::string c = one(v); !c.empty()) return c;
    return std::string();
  };
}
// At least one item, each one of `names`.
inline Range<std::vector<std::string>> some_of(std::vector<std::string> names) {
  auto each = each_one_of(std::move(names));
  return [each](const std::vector<std::string>& items) {
    return items.empty() ? std::string(" is empty: name at least one") : each(items);
  };
}

// --- Table lines.
// An option whose member `access(s)` returns (a reference into S).
template <typename S, typename Access>
auto option_at(std::string key, Access access, std::string help,
               Range<std::decay_t<decltype(access(std::declval<S&>()))>> range = nullptr) {
  using M = std::decay_t<decltype(access(std::declval<S&>()))>;
  Option<S> o;
  o.key = std::move(key);
  o.help = std::move(help);
  o.kind = option_kind<M>();
  o.set = [access](S& s, const OptionValue& v) { access(s) = option_cast<M>(v); };
  o.get = [access](const S& s) -> OptionValue {
    return OptionValue(std::in_place_type<M>, access(const_cast<S&>(s)));  // read only
  };
  if (range) o.complaint = [access, range](const S& s) { return range(access(const_cast<S&>(s))); };
  return o;
}
// An option that is a member of S.
template <typename S, typename M>
Option<S> option(std::string key, M S::*member, std::string help, Range<M> range = nullptr) {
  return option_at<S>(std::move(key), [member](S& s) -> M& { return s.*member; }, std::move(help), std::move(range));
}
// The options of a part of S (a member struct), as options of S.
template <typename S, typename Part>
OptionTable<S> lift(const OptionTable<Part>& table, Part S::*part) {
  OptionTable<S> out;
  for (const Option<Part>& p : table) {
    Option<S> o;
    o.key = p.key, o.old_key = p.old_key, o.help = p.help, o.kind = p.kind;
    o.json_as = p.json_as, o.is_flag = p.is_flag, o.in_sweeps = p.in_sweeps, o.in_first_file = p.in_first_file;
    o.set = [set = p.set, part](S& s, const OptionValue& v) { set(s.*part, v); };
    o.get = [get = p.get, part](const S& s) { return get(s.*part); };
    if (p.complaint) o.complaint = [c = p.complaint, part](const S& s) { return c(s.*part); };
    out.push_back(std::move(o));
  }
  return out;
}

// The option named `key` (or its old key); nullptr when none.
template <typename S>
const Option<S>* find_option(const OptionTable<S>& table, const std::string& key) {
  for (const Option<S>& o : table)
    if (o.named(key)) return &o;
  return nullptr;
}

// Throws OptionError(key, complaint) for the first option whose value is out of range, the key
// spelt as in code ("training_iters"; the command line turns it back into its flag).
template <typename S>
void check_options(const OptionTable<S>& table, const S& s) {
  for (const Option<S>& o : table)
    if (o.complaint)
      if (std::string c = o.complaint(s); !c.empty()) throw OptionError(Option<S>::json_spelling(o.key), c);
}

}  // namespace looplab
