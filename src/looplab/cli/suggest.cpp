#include "looplab/cli/suggest.h"

#include "looplab/model/config.h"
#include "looplab/tasks/registry.h"
#include "looplab/util/error.h"
#include "looplab/util/list.h"
#include "looplab/util/nearest.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdlib>

namespace looplab::cli {

namespace {

using CLI::App;
using CLI::Option;

bool is_named(const App* a) { return !a->get_name().empty() && !a->get_disabled(); }
bool is_group(const App* a) { return a->get_name().empty() && !a->get_disabled(); }  // an option group

// The names of the subcommands a user may type, in registration order (hidden ones, group "",
// left out).
std::vector<std::string> listed_subcommands(const App& app) {
  std::vector<std::string> out;
  for (const App* s : app.get_subcommands([](const App* a) { return is_named(a) && !a->get_group().empty(); }))
    out.push_back(s->get_name());
  return out;
}

// "data gen" for that app, "" for the root.
std::string command_path(const App* app) {
  std::string out;
  for (const App* a = app; a != nullptr && a->get_parent() != nullptr; a = a->get_parent())
    if (!a->get_name().empty()) out = a->get_name() + (out.empty() ? "" : " " + out);
  return out;
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

// The subcommands of `app` that this parse selected.
std::vector<const App*> parsed_subcommands(const App* app) {
  return app->get_subcommands([](const App* a) { return is_named(a) && a->parsed(); });
}

// The words CLI11 left over, each with the app that was parsing when it met it: the root, then
// the selected subcommands, depth first. (CLI11 keeps them after a failed parse: remaining().)
void left_over(const App* app, std::vector<std::pair<const App*, std::string>>& out) {
  for (const std::string& w : app->remaining()) out.emplace_back(app, w);
  for (const App* sub : parsed_subcommands(app)) left_over(sub, out);
}

// "-5" and "-0.5" are values, not options.
bool is_option_word(const std::string& w) {
  if (w.size() < 2 || w[0] != '-') return false;
  char* end = nullptr;
  std::strtod(w.c_str(), &end);
  return end != w.c_str() + w.size();
}

std::string explain_unknown_command(const std::string& word, const App* scope) {
  const std::string path = command_path(scope);
  const std::string shown = path.empty() ? word : path + " " + word;
  const auto candidates = listed_subcommands(*scope);
  const std::string near = nearest(word, candidates);
  if (!near.empty()) return "unknown command '" + shown + "'; did you mean '" + near + "'?";
  return "unknown command '" + shown + "' (one of: " + join(candidates) + ")";
}

std::string explain_unknown_option(const std::string& word, const App* scope) {
  std::vector<std::string> candidates;
  for (const Option* o : all_options(scope)) {
    if (!o->nonpositional()) continue;
    for (const auto& l : o->get_lnames()) candidates.push_back("--" + l);
    for (const auto& s : o->get_snames())  // every "-y" is one edit from "-x": only case is worth suggesting
      if (word.size() != 2 || CLI::detail::to_lower(s) == CLI::detail::to_lower(word.substr(1))) candidates.push_back("-" + s);
  }
  const std::string path = command_path(scope);
  const std::string near = nearest(word, candidates);
  std::string out = "unknown option '" + word + "' for '" + (path.empty() ? "looplab" : path) + "'";
  if (!near.empty()) return out + "; did you mean '" + near + "'?";
  return out + " (run 'looplab " + (path.empty() ? "" : path + " ") + "--help' for its options)";
}

}  // namespace

std::string explain_parse_error(const CLI::App& root, const std::vector<std::string>& args, const CLI::ParseError& e) {
  // CLI11 reports a left-over word as ExtrasError, or as RequiredError ("A subcommand is
  // required") when the word was meant to be the required subcommand.
  const bool extras = dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr;
  const bool required = dynamic_cast<const CLI::RequiredError*>(&e) != nullptr;
  if (!extras && !required) return e.what();
  // The first left-over word in the order typed.
  std::vector<std::pair<const App*, std::string>> words;
  left_over(&root, words);
  const std::pair<const App*, std::string>* first = nullptr;
  size_t first_at = args.size();
  for (const auto& w : words) {
    const size_t at = std::find(args.begin(), args.end(), w.second) - args.begin();
    if (at < first_at) first_at = at, first = &w;
  }
  if (first) {
    const auto& [scope, word] = *first;
    if (is_option_word(word)) return explain_unknown_option(word.substr(0, word.find('=')), scope);
    if (!listed_subcommands(*scope).empty() && parsed_subcommands(scope).empty()) return explain_unknown_command(word, scope);
  }
  // The deepest command selected: a required subcommand missing there.
  const App* cur = &root;
  for (auto subs = parsed_subcommands(cur); !subs.empty(); subs = parsed_subcommands(cur)) cur = subs.front();
  const std::string what = e.what();
  if (required && what.find("subcommand") != std::string::npos && cur->get_require_subcommand_min() > 0) {
    const std::string list = " (one of: " + join(listed_subcommands(*cur)) + ")";
    if (cur == &root) return "a subcommand is required" + list;
    return "a subcommand of '" + command_path(cur) + "' is required" + list;
  }
  return what;
}

std::string command_list(const CLI::App& root) {
  const auto subs = listed_subcommands(root);
  size_t width = 0;
  for (const std::string& s : subs) width = std::max(width, s.size());
  width = std::max<size_t>(width + 2, 10);
  std::string out = "usage: looplab [--threads N] COMMAND [OPTIONS]\n\ncommands:\n";
  for (const std::string& name : subs) {
    std::string description = root.get_subcommand(name)->get_description();
    description = description.substr(0, description.find('\n'));
    std::string line = "  " + name + std::string(width - name.size(), ' ') + description;
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
