#include "looplab/sweep/sweep_file.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <toml++/toml.h>

#include "looplab/model/config.h"
#include "looplab/tasks/registry.h"
#include "looplab/util/error.h"
#include "looplab/util/nearest.h"

namespace looplab::sweep {


namespace fs = std::filesystem;

const Setting* Run::find(const std::string& key) const {
  const Setting* found = nullptr;
  for (const Setting& s : settings)
    if (s.key == key) found = &s;  // the last one set wins
  return found;
}

namespace {

int64_t line_of(const toml::node& n) { return static_cast<int64_t>(n.source().begin.line); }

// A table's entries in file order (toml++ keeps them sorted by key): the first axis of a file
// is the outermost of its product, and the folder names follow the file.
std::vector<std::pair<std::string, const toml::node*>> in_file_order(const toml::table& t) {
  std::vector<std::pair<std::string, const toml::node*>> out;
  for (auto&& [k, v] : t) out.emplace_back(std::string(k.str()), &v);
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    const auto& x = a.second->source().begin;
    const auto& y = b.second->source().begin;
    return x.line != y.line ? x.line < y.line : x.column < y.column;
  });
  return out;
}

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(int64_t line, const std::string& key, const std::string& message) const {
    std::string where = file_;
    if (line > 0) where += ":" + std::to_string(line);
    throw Error(where + (key.empty() ? "" : ": key '" + key + "'") + ": " + message);
  }

  // A key of the base, an axis or a rule: an option of the run table or one that picks the preset.
  void check_key(const std::string& key, int64_t line) const {
    const auto& preset = preset_keys();
    if (std::find(preset.begin(), preset.end(), key) != preset.end() || find_run_option(key)) return;
    std::vector<std::string> names = preset;
    for (const RunOption& o : run_options()) names.push_back(o.key);
    const std::string near = nearest(key, names);
    fail(line, key, "unknown option" + (near.empty() ? std::string(" (see `looplab train --help`)") : ", did you mean '" + near + "'?"));
  }

  OptionValue value(const toml::node& n, const std::string& key) const {
    if (const auto* i = n.as_integer()) return i->get();
    if (const auto* d = n.as_floating_point()) return d->get();
    if (const auto* s = n.as_string()) return s->get();
    if (const auto* b = n.as_boolean()) return b->get();
    if (const auto* a = n.as_array()) {  // a list of strings ([eval]'s split)
      std::vector<std::string> out;
      for (const toml::node& e : *a) {
        if (!e.is_string()) fail(line_of(e), key, "expected a list of strings");
        out.push_back(e.as_string()->get());
      }
      if (!out.empty()) return out;
    }
    fail(line_of(n), key, "expected an integer, a number, a string, a boolean or a list of strings");
  }

  // A check's OptionError ("training_iters", " must be >= 1") at the file's `key` and `line`.
  [[noreturn]] void fail_option(int64_t line, const std::string& key, const OptionError& e) const {
    std::string rest = e.rest();
    if (!rest.empty() && (rest[0] == ' ' || rest[0] == ':')) rest.erase(0, rest.find_first_not_of(": "));
    fail(line, key, rest);
  }
  // The option an OptionError names, as a flag and a sweep key spell it ("training-iters").
  static std::string key_of(const OptionError& e) {
    std::string key = e.option();
    std::replace(key.begin(), key.end(), '_', '-');
    return key;
  }

  // `table` may hold only `allowed` keys.
  void only(const toml::table& table, const std::vector<std::string>& allowed, const std::string& where) const {
    for (auto&& [k, v] : table) {
      const std::string key(k.str());
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        const std::string near = nearest(key, allowed);
        fail(line_of(v), key, "unknown key in " + where + (near.empty() ? "" : ", did you mean '" + near + "'?"));
      }
    }
  }

  const toml::table* table(const toml::table& root, const std::string& key) const {
    const toml::node* n = root.get(key);
    if (!n) return nullptr;
    if (!n->is_table()) fail(line_of(*n), key, "expected a table ([" + key + "])");
    return n->as_table();
  }

  // A table of looplab eval's or analyze's options (eval/eval_options.h,
  // analysis/analysis_options.h): its keys are their flags' names (the ones a sweep takes), each
  // value set and checked as the flag's would be; `extra` keys are the caller's.
  template <typename S>
  void options(const toml::table& t, const OptionTable<S>& table, S& s, const std::string& where,
               const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> allowed = extra;
    for (const Option<S>& o : table)
      if (o.is_flag && o.in_sweeps) {
        allowed.push_back(o.key);
        if (!o.old_key.empty()) allowed.push_back(o.old_key);
      }
    only(t, allowed, where);  // an unknown key, or a command-line-only flag, is named with the nearest one
    std::map<const Option<S>*, std::string> given;  // each option once, under one of its names
    for (const auto& [key, v] : in_file_order(t)) {
      const Option<S>* o = find_option(table, key);
      if (!o) continue;  // an extra key
      if (auto [it, fresh] = given.emplace(o, key); !fresh)
        fail(line_of(*v), key, "sets what '" + it->second + "' sets (" + o->key + ")");
      const OptionValue x = value(*v, key);  // its own errors name the file, line and key
      try {
        o->set(s, x);
      } catch (const Error& e) {
        fail(line_of(*v), key, e.what());
      }
    }
    try {
      check(s);
    } catch (const OptionError& e) {
      std::string key = key_of(e);
      const Option<S>* o = find_option(table, key);
      const auto it = o ? given.find(o) : given.end();
      if (it != given.end()) key = it->second;  // as the file spells it
      const toml::node* n = t.get(key);
      fail_option(n ? line_of(*n) : 0, key, e);
    } catch (const Error& e) {
      fail(0, "", where + ": " + e.what());
    }
  }

  // The settings of a table whose values are single values ([base], an [[include]]).
  std::vector<Setting> settings(const toml::table& t) const {
    std::vector<Setting> out;
    for (const auto& [key, v] : in_file_order(t)) {
      check_key(key, line_of(*v));
      out.push_back({key, value(*v, key), line_of(*v)});
    }
    return out;
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

// A folder name from a run's distinguishing settings: key-value pairs joined by '_', any
// character outside [A-Za-z0-9.+-] of a value replaced by '-'.
std::string folder_name(const std::vector<Setting>& named) {
  std::string name;
  for (const Setting& s : named) {
    std::string v = to_text(s.value);
    for (char& c : v)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '+' && c != '-') c = '-';
    if (!name.empty()) name += "_";
    name += s.key + "-" + v;
  }
  return name.empty() ? "base" : name;
}

bool same(const OptionValue& a, const OptionValue& b) {
  // 3e-4 in one place and 0.0003 in another are the same; an integer 1 matches a number 1.0.
  auto number = [](const OptionValue& v, double& out) {
    if (const auto* i = std::get_if<int64_t>(&v)) return out = static_cast<double>(*i), true;
    if (const auto* d = std::get_if<double>(&v)) return out = *d, true;
    return false;
  };
  double x, y;
  if (number(a, x) && number(b, y)) return x == y;
  return a == b;
}

// Does `run` match every key of `rule` (a value, or a list of values any of which may match)?
bool matches(const Reader& r, const std::vector<Setting>& run, const toml::table& rule) {
  for (auto&& [k, v] : rule) {
    const std::string key(k.str());
    const Setting* s = nullptr;
    for (const Setting& x : run)
      if (x.key == key) s = &x;
    if (!s) return false;
    bool any = false;
    if (const auto* a = v.as_array()) {
      for (const toml::node& e : *a) any = any || same(s->value, r.value(e, key));
    } else {
      any = same(s->value, r.value(v, key));
    }
    if (!any) return false;
  }
  return true;
}

RunSpec make_spec(const Reader& r, const std::vector<Setting>& settings) {
  auto text = [&](const std::string& key, const std::string& fallback) -> std::pair<std::string, int64_t> {
    const Setting* found = nullptr;
    for (const Setting& s : settings)
      if (s.key == key) found = &s;
    if (!found) return {fallback, 0};
    if (!std::holds_alternative<std::string>(found->value)) r.fail(found->line, key, "expected a string");
    return {std::get<std::string>(found->value), found->line};
  };
  // Plain variables rather than structured bindings: lambdas below capture them (C++17).
  const std::pair<std::string, int64_t> task_setting = text("task", all_tasks().front()->name()),
                                        recall_setting = text("recall", "external"),
                                        norm_setting = text("norm", "post"), preset_setting = text("preset", "cpu");
  const std::string &task_name = task_setting.first, &recall = recall_setting.first, &norm = norm_setting.first,
                    &preset = preset_setting.first;
  const int64_t task_line = task_setting.second, recall_line = recall_setting.second, norm_line = norm_setting.second,
                preset_line = preset_setting.second;
  RunSpec spec;
  auto guard = [&](int64_t line, const std::string& key, auto f) {
    try {
      f();
    } catch (const Error& e) {
      r.fail(line, key, e.what());
    }
  };
  Recall rc{};
  Norm nm{};
  guard(task_line, "task", [&] { task(task_name); });
  guard(recall_line, "recall", [&] { rc = parse_recall(recall); });
  guard(norm_line, "norm", [&] { nm = parse_norm(norm); });
  guard(preset_line, "preset", [&] { spec = preset_spec(preset, task_name, rc, nm); });
  for (const Setting& s : settings)
    if (const RunOption* o = find_run_option(s.key)) guard(s.line, s.key, [&] { o->set(spec, s.value); });
  try {
    check(spec);
  } catch (const OptionError& e) {
    const std::string key = Reader::key_of(e);
    const RunOption* named = find_run_option(key);
    const Setting* s = nullptr;
    for (const Setting& x : settings)
      if (x.key == key || (named && find_run_option(x.key) == named)) s = &x;
    r.fail_option(s ? s->line : 0, s ? s->key : key, e);
  } catch (const Error& e) {
    r.fail(0, "", e.what());
  }
  return spec;
}

}  // namespace

Sweep load_sweep(const std::string& file) {
  if (!fs::exists(file)) throw Error(file + ": no such sweep file");
  Reader r(file);
  toml::table root;
  try {
    root = toml::parse_file(file);
  } catch (const toml::parse_error& e) {
    r.fail(static_cast<int64_t>(e.source().begin.line), "", std::string(e.description()));
  }
  r.only(root, {"name", "out", "base", "axes", "include", "exclude", "eval", "analyze"}, "the sweep file");
  Sweep sw;
  sw.file = file;
  const fs::path path(file);
  sw.name = path.stem().string();
  if (const toml::node* n = root.get("name")) {
    if (!n->is_string() || n->as_string()->get().empty()) r.fail(line_of(*n), "name", "expected a non-empty string");
    sw.name = n->as_string()->get();
  }
  fs::path out = path.parent_path() / path.stem();
  if (const toml::node* n = root.get("out")) {
    if (!n->is_string() || n->as_string()->get().empty()) r.fail(line_of(*n), "out", "expected a non-empty string");
    out = fs::path(n->as_string()->get());
    if (out.is_relative()) out = path.parent_path() / out;
  }
  sw.out = out.lexically_normal().string();

  std::vector<Setting> base;
  if (const toml::table* t = r.table(root, "base")) base = r.settings(*t);

  // The axes' product, the first axis outermost.
  struct Axis {
    std::string key;
    std::vector<Setting> values;
  };
  std::vector<Axis> axes;
  if (const toml::table* t = r.table(root, "axes")) {
    for (const auto& [key, v] : in_file_order(*t)) {
      r.check_key(key, line_of(*v));
      for (const Setting& b : base)
        if (b.key == key)
          r.fail(line_of(*v), key, "is both an axis and set in [base] (line " + std::to_string(b.line) + ")");
      const auto* a = v->as_array();
      if (!a || a->empty()) r.fail(line_of(*v), key, "an axis is a non-empty list of values");
      Axis axis{key, {}};
      for (const toml::node& e : *a) {
        for (const Setting& seen : axis.values)
          if (same(seen.value, r.value(e, key))) r.fail(line_of(e), key, "value " + to_text(seen.value) + " appears twice");
        axis.values.push_back({key, r.value(e, key), line_of(e)});
      }
      axes.push_back(std::move(axis));
      sw.axes.push_back(key);
    }
  }
  auto rules = [&](const std::string& key) {
    std::vector<const toml::table*> out;
    const toml::node* n = root.get(key);
    if (!n) return out;
    const auto* a = n->as_array();
    if (!a) r.fail(line_of(*n), key, "expected an array of tables ([[" + key + "]])");
    for (const toml::node& e : *a) {
      if (!e.is_table()) r.fail(line_of(e), key, "expected a table ([[" + key + "]])");
      for (auto&& [rk, rv] : *e.as_table()) r.check_key(std::string(rk.str()), line_of(rv));
      out.push_back(e.as_table());
    }
    return out;
  };
  const auto excludes = rules("exclude");
  const auto includes = rules("include");

  std::vector<std::vector<Setting>> named;  // the settings that name each run
  std::vector<size_t> digit(axes.size(), 0);
  const bool any_axis = !axes.empty();
  while (true) {
    std::vector<Setting> combo;
    for (size_t a = 0; a < axes.size(); ++a) combo.push_back(axes[a].values[digit[a]]);
    std::vector<Setting> all = base;
    all.insert(all.end(), combo.begin(), combo.end());
    bool excluded = false;
    for (const toml::table* rule : excludes) excluded = excluded || matches(r, all, *rule);
    if (!excluded && (any_axis || includes.empty())) named.push_back(combo);
    size_t a = axes.size();
    while (a > 0 && ++digit[a - 1] == axes[a - 1].values.size()) digit[--a] = 0;
    if (a == 0) break;
  }
  // An include adds its own product: base + its keys, a list giving one run per value.
  for (const toml::table* rule : includes) {
    std::vector<std::vector<Setting>> grid = {{}};
    for (const auto& [key, v] : in_file_order(*rule)) {
      std::vector<Setting> values;
      if (const auto* a = v->as_array()) {
        if (a->empty()) r.fail(line_of(*v), key, "an empty list includes nothing");
        for (const toml::node& e : *a) values.push_back({key, r.value(e, key), line_of(e)});
      } else {
        values.push_back({key, r.value(*v, key), line_of(*v)});
      }
      std::vector<std::vector<Setting>> wider;
      for (const auto& g : grid)
        for (const Setting& x : values) {
          wider.push_back(g);
          wider.back().push_back(x);
        }
      grid = std::move(wider);
    }
    named.insert(named.end(), grid.begin(), grid.end());
  }

  std::map<std::string, int64_t> seen;
  for (const std::vector<Setting>& n : named) {
    Run run;
    run.index = static_cast<int64_t>(sw.runs.size());
    run.name = folder_name(n);
    run.settings = base;
    run.settings.insert(run.settings.end(), n.begin(), n.end());
    run.spec = make_spec(r, run.settings);
    if (auto [it, fresh] = seen.emplace(run.name, run.index); !fresh)
      r.fail(n.empty() ? 0 : n.front().line, "", "runs " + std::to_string(it->second) + " and " +
                                                    std::to_string(run.index) + " have the same settings (" + run.name + ")");
    sw.runs.push_back(std::move(run));
  }
  if (sw.runs.empty()) r.fail(0, "", "no runs (every run of the axes is excluded)");

  if (const toml::table* t = r.table(root, "eval")) r.options(*t, eval_option_table(), sw.eval, "[eval]");
  if (const toml::table* t = r.table(root, "analyze")) {
    if (const toml::node* n = t->get("enabled")) {
      if (!n->is_boolean()) r.fail(line_of(*n), "enabled", "expected true or false");
      sw.analyze_enabled = n->as_boolean()->get();
    }
    r.options(*t, analyze_option_table(), sw.analyze, "[analyze]", {"enabled"});
  }
  return sw;
}

}  // namespace looplab::sweep
