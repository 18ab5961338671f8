#include "looplab/cli/suggest.h"

#include "looplab/model/config.h"
#include "looplab/tasks/registry.h"
#include "looplab/util/error.h"
#include "looplab/util/list.h"
#include "looplab/util/nearest.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <climits>
#include <map>

namespace looplab::cli {

namespace {

using CLI::App;
using CLI::Option;

bool is_named(const App* a) { return !a->get_name().empty() && !a->get_disabled(); }
bool is_group(const App* a) { return a->get_name().empty() && !a->get_disabled(); }  // an option group

// The subcommands a user may type, in registration order (hidden ones, group "", left out).
std::vector<const App*> listed_subcommands(const App& app) {
  std::vector<const App*> out;
  for (const App* s : app.get_subcommands([](const App* a) { return is_named(a) && !a->get_group().empty(); }))
    out.push_back(s);
  return out;
}


std::vector<std::string> names(const std::vector<const App*>& apps) {
  std::vector<std::string> out;
  for (const App* a : apps) out.push_back(a->get_name());
  return out;
}

// "data gen" for that app, "" for the root.
std::string command_path(const App* app) {
  std::vector<std::string> parts;
  for (const App* a = app; a != nullptr && a->get_parent() != nullptr; a = a->get_parent())
    if (!a->get_name().empty()) parts.push_back(a->get_name());
  std::string out;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) out += (out.empty() ? "" : " ") + *it;
  return out;
}

std::string display_name(const App* app) {
  const std::string path = command_path(app);
  return path.empty() ? "looplab" : path;
}

// The app's options, with those of its option groups.
std::vector<const Option*> all_options(const App* app) {
  std::vector<const Option*> out = app->get_options();
  for (const App* g : app->get_subcommands([](const App* a) { return is_group(a); })) {
    auto more = all_options(g);
    out.insert(out.end(), more.begin(), more.end());
  }
  return out;
}

// The same splitting rules as CLI::detail::split_long / split_short (CLI11 2.1.2).
bool valid_first_char(char c) { return c != '-' && c != '!' && c != ' ' && c != '\n'; }

bool split_long(const std::string& w, std::string& name, std::string& value) {
  if (w.size() <= 2 || w.compare(0, 2, "--") != 0 || !valid_first_char(w[2])) return false;
  const auto eq = w.find('=');
  name = w.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
  value = eq == std::string::npos ? "" : w.substr(eq + 1);
  return true;
}

bool split_short(const std::string& w, std::string& name, std::string& rest) {
  if (w.size() <= 1 || w[0] != '-' || !valid_first_char(w[1])) return false;
  name = w.substr(1, 1);
  rest = w.substr(2);
  return true;
}

// A replay of CLI11's parse of args over the apps' definitions, recording the first word that
// CLI11 leaves over as an unknown command or an unknown option.
class Scan {
 public:
  enum class Kind { kNone, kUnknownCommand, kUnknownOption, kExtraPositional };
  struct Problem {
    Kind kind = Kind::kNone;
    std::string word;
    const App* scope = nullptr;
  };

  Scan(const App& root, std::vector<std::string> words) : cur_(&root), words_(std::move(words)) { run(); }

  const App* current() const { return cur_; }
  size_t selected(const App* a) const {
    auto it = selected_.find(a);
    return it == selected_.end() ? 0 : it->second;
  }
  // The first unknown command or option, else the first other left-over word.
  const Problem& problem() const { return named_.kind != Kind::kNone ? named_ : other_; }

 private:
  const App* cur_;
  std::vector<std::string> words_;
  size_t i_ = 0;
  std::map<const App*, size_t> selected_;  // subcommands selected in each app
  std::vector<const App*> used_;           // the subcommands selected
  std::map<const Option*, int> filled_;    // words given to each positional
  Problem named_, other_;

  void record(Kind kind, const std::string& word) {
    if (cur_->get_allow_extras() || cur_->get_prefix_command()) return;  // left-overs are welcome there
    Problem& p = kind == Kind::kExtraPositional ? other_ : named_;
    if (p.kind == Kind::kNone) p = {kind, word, cur_};
  }

  bool accepts_subcommand(const App* a) const {
    const size_t max = a->get_require_subcommand_max();
    return max == 0 || selected(a) < max;
  }

  static const App* find_local_subcommand(const App* a, const std::string& w) {
    for (const App* s : a->get_subcommands([](const App*) { return true; })) {
      if (s->get_disabled()) continue;
      if (s->get_name().empty()) {
        if (const App* found = find_local_subcommand(s, w)) return found;
      } else if (s->check_name(w)) {
        return s;
      }
    }
    return nullptr;
  }

  // As CLI::App::_valid_subcommand: a subcommand of the current app or of an ancestor still open.
  const App* find_subcommand(const std::string& w, const App** owner) const {
    for (const App* a = cur_; a != nullptr; a = a->get_parent()) {
      if (!accepts_subcommand(a)) continue;
      const App* s = find_local_subcommand(a, w);
      if (s != nullptr && std::find(used_.begin(), used_.end(), s) == used_.end()) {
        if (owner != nullptr) *owner = a;
        return s;
      }
    }
    return nullptr;
  }

  const Option* find_option(const std::string& name, bool is_long) const {
    for (const App* a = cur_; a != nullptr; a = a->get_parent()) {
      for (const Option* o : all_options(a))
        if (is_long ? o->check_lname(name) : o->check_sname(name)) return o;
      if (!a->get_fallthrough()) break;
    }
    return nullptr;
  }

  // "-5" is a value, not an option, unless the app defines -5 (as CLI11's _recognize).
  bool is_option_word(const std::string& w) const {
    std::string name, rest;
    if (split_long(w, name, rest)) return true;
    if (!split_short(w, name, rest)) return false;
    if (name[0] >= '0' && name[0] <= '9') return find_option(name, false) != nullptr;
    return true;
  }

  // What CLI11 would not take as an option's optional value.
  bool is_special(const std::string& w) const {
    return w == "--" || find_subcommand(w, nullptr) != nullptr || is_option_word(w);
  }

  size_t required_positionals_left() const {
    size_t left = 0;
    for (const Option* o : all_options(cur_)) {
      if (!o->get_positional() || !o->get_required()) continue;
      auto it = filled_.find(o);
      const int have = it == filled_.end() ? 0 : it->second;
      if (o->get_items_expected_min() > have) left += static_cast<size_t>(o->get_items_expected_min() - have);
    }
    return left;
  }

  bool fill_positional() {
    for (const Option* o : all_options(cur_)) {
      if (!o->get_positional()) continue;
      int& have = filled_[o];
      if (have < o->get_items_expected_min() || o->get_allow_extra_args()) {
        ++have;
        return true;
      }
    }
    return false;
  }

  void positional(const std::string& w) {
    ++i_;
    if (fill_positional()) return;
    if (cur_->get_prefix_command()) {  // everything after goes to the command
      i_ = words_.size();
      return;
    }
    const bool takes_command = !listed_subcommands(*cur_).empty() && selected(cur_) == 0;
    record(takes_command ? Kind::kUnknownCommand : Kind::kExtraPositional, w);
  }

  // The option's values after its word (or its attached value), as CLI::App::_parse_arg.
  void values(const Option* o, bool attached) {
    const int min_num = std::min(o->get_type_size_min(), o->get_items_expected_min());
    long long max_num = o->get_items_expected_max();
    if (max_num >= CLI::detail::expected_max_vector_size / 16 && !o->get_allow_extra_args()) {
      const long long t = static_cast<long long>(o->get_type_size_max()) * o->get_expected_min();
      max_num = t <= INT_MAX ? t : CLI::detail::expected_max_vector_size;
    }
    long long collected = attached ? 1 : 0;
    while (min_num > collected && i_ < words_.size()) {
      ++i_;
      ++collected;
    }
    if (min_num > collected) return;  // CLI11 throws ArgumentMismatch
    if (max_num > collected || o->get_allow_extra_args()) {
      const size_t required_left = required_positionals_left();
      while ((collected < max_num || o->get_allow_extra_args()) && i_ < words_.size() && !is_special(words_[i_])) {
        if (required_left >= words_.size() - i_) break;
        ++i_;
        ++collected;
      }
      if (i_ < words_.size() && words_[i_] == "--") ++i_;
    }
  }

  static bool is_flag(const Option* o) { return o->get_items_expected_max() == 0; }

  void run() {
    bool positional_only = false;
    while (i_ < words_.size()) {
      const std::string w = words_[i_];
      if (positional_only) {
        positional(w);
        continue;
      }
      if (w == "--") {
        positional_only = true;
        ++i_;
        continue;
      }
      const App* owner = nullptr;
      if (const App* sub = find_subcommand(w, &owner)) {
        if (required_positionals_left() > 0) {  // CLI11 fills required positionals first
          positional(w);
          continue;
        }
        ++i_;
        for (const App* a = sub->get_parent(); a != nullptr; a = a->get_parent()) {
          ++selected_[a];
          if (a == owner) break;
        }
        used_.push_back(sub);
        cur_ = sub;
        continue;
      }
      std::string name, value;
      if (split_long(w, name, value)) {
        const Option* o = find_option(name, true);
        ++i_;
        if (o == nullptr) {
          record(Kind::kUnknownOption, w.substr(0, w.find('=')));
        } else if (!is_flag(o)) {
          values(o, !value.empty());
        }
        continue;
      }
      if (is_option_word(w)) {
        split_short(w, name, value);  // value: the rest after -x
        const Option* o = find_option(name, false);
        if (o == nullptr) {
          ++i_;
          record(Kind::kUnknownOption, w);
        } else if (is_flag(o)) {
          if (value.empty()) {
            ++i_;
          } else {
            words_[i_] = "-" + value;  // -abc: the flag -a, then -bc
          }
        } else {
          ++i_;
          values(o, !value.empty());
        }
        continue;
      }
      positional(w);
    }
  }
};

std::string explain_unknown_command(const Scan::Problem& p) {
  const std::string path = command_path(p.scope);
  const std::string shown = path.empty() ? p.word : path + " " + p.word;
  const auto candidates = names(listed_subcommands(*p.scope));
  const std::string near = nearest(p.word, candidates);
  if (!near.empty()) return "unknown command '" + shown + "'; did you mean '" + near + "'?";
  return "unknown command '" + shown + "' (one of: " + join(candidates) + ")";
}

std::string explain_unknown_option(const Scan::Problem& p) {
  std::vector<std::string> candidates;
  const bool short_word = p.word.size() == 2;
  for (const Option* o : all_options(p.scope)) {
    if (!o->nonpositional()) continue;
    for (const auto& l : o->get_lnames()) candidates.push_back("--" + l);
    for (const auto& s : o->get_snames()) {
      // Every "-y" is one edit from "-x": only a difference of case is worth suggesting.
      if (short_word && CLI::detail::to_lower(s) != CLI::detail::to_lower(p.word.substr(1))) continue;
      candidates.push_back("-" + s);
    }
  }
  const std::string where = display_name(p.scope);
  const std::string near = nearest(p.word, candidates);
  std::string out = "unknown option '" + p.word + "' for '" + where + "'";
  if (!near.empty()) return out + "; did you mean '" + near + "'?";
  const std::string path = command_path(p.scope);
  return out + " (run 'looplab " + (path.empty() ? "" : path + " ") + "--help' for its options)";
}

}  // namespace

std::string explain_parse_error(const CLI::App& root, const std::vector<std::string>& args, const CLI::ParseError& e) {
  // CLI11 reports a left-over word as ExtrasError, or as RequiredError ("A subcommand is
  // required") when the word was meant to be the required subcommand.
  const bool extras = dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr;
  const bool required = dynamic_cast<const CLI::RequiredError*>(&e) != nullptr;
  if (!extras && !required) return e.what();
  const Scan scan(root, args);
  const Scan::Problem& p = scan.problem();
  if (p.kind == Scan::Kind::kUnknownCommand) return explain_unknown_command(p);
  if (p.kind == Scan::Kind::kUnknownOption) return explain_unknown_option(p);
  const App* cur = scan.current();
  const std::string what = e.what();
  if (required && what.find("subcommand") != std::string::npos && cur->get_require_subcommand_min() > 0 &&
      scan.selected(cur) < cur->get_require_subcommand_min()) {
    const std::string list = " (one of: " + join(names(listed_subcommands(*cur))) + ")";
    if (cur == &root) return "a subcommand is required" + list;
    return "a subcommand of '" + command_path(cur) + "' is required" + list;
  }
  return what;
}

std::string command_list(const CLI::App& root) {
  const auto subs = listed_subcommands(root);
  size_t width = 0;
  for (const App* s : subs) width = std::max(width, s->get_name().size());
  width = std::max<size_t>(width + 2, 10);
  std::string out = "usage: looplab [--threads N] COMMAND [OPTIONS]\n\ncommands:\n";
  for (const App* s : subs) {
    std::string description = s->get_description();
    description = description.substr(0, description.find('\n'));
    std::string line = "  " + s->get_name() + std::string(width - s->get_name().size(), ' ') + description;
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  out += "\nrun 'looplab COMMAND --help' for a command's options\n";
  return out;
}

// A CLI11 check from a library parser: its message, and the nearest valid name.
CLI::Validator checked(const std::string& what, std::function<void(const std::string&)> parse,
                       std::vector<std::string> names) {
  return CLI::Validator(
      [parse, names](std::string& v) {
        try {
          parse(v);
          return std::string();
        } catch (const Error& e) {
          const std::string near = nearest(v, names);
          return std::string(e.what()) + (near.empty() ? "" : "; did you mean '" + near + "'?");
        }
      },
      what);
}

CLI::Validator task_name() {
  std::vector<std::string> names;
  for (const Task* t : all_tasks()) names.push_back(t->name());
  return checked("TASK", [](const std::string& v) { task(v); }, names);
}
CLI::Validator recall_name() {
  return checked("RECALL", [](const std::string& v) { parse_recall(v); }, recall_names());
}
CLI::Validator norm_name() {
  return checked("NORM", [](const std::string& v) { parse_norm(v); }, norm_names());
}

}  // namespace looplab::cli
