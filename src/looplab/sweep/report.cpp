#include "looplab/sweep/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "looplab/io/atomic_file.h"
#include "looplab/io/json_file.h"
#include "looplab/io/json_reader.h"
#include "looplab/model/config.h"
#include "looplab/run/reports.h"
#include "looplab/run/run_folder.h"
#include "looplab/sweep/state.h"
#include "looplab/tasks/registry.h"
#include "looplab/util/error.h"
#include "looplab/util/numeric.h"

namespace looplab::sweep {

namespace fs = std::filesystem;

Stat stat_of(const std::vector<double>& v) {
  const MeanAndError m = mean_and_standard_error(v);
  return {static_cast<int64_t>(v.size()), m.mean, m.standard_error};
}

namespace {

// The paper's value at task/norm/recall/lr in one table, its learning rates written as "3e-4".
std::optional<double> paper_value(const nlohmann::json& table, const std::string& task, const std::string& norm,
                                  const std::string& recall, double lr) {
  if (!table.is_object()) return std::nullopt;
  const std::string prefix = task + "/" + norm + "/" + recall + "/";
  for (const auto& [key, value] : table.items()) {
    if (key.rfind(prefix, 0) != 0 || !value.is_number()) continue;
    const double cell_lr = std::strtod(key.c_str() + prefix.size(), nullptr);
    if (std::abs(cell_lr - lr) <= 1e-9 * lr) return value.get<double>();
  }
  return std::nullopt;
}

std::string cell(const Stat& s) {
  if (s.n == 0) return "-";
  char buf[64];
  if (s.n == 1) std::snprintf(buf, sizeof buf, "%.2f", s.mean);
  else std::snprintf(buf, sizeof buf, "%.2f ± %.2f", s.mean, s.standard_error);
  return buf;
}

std::string paper_cell(const std::optional<double>& v) {
  if (!v) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", *v);
  return buf;
}

// A run or group name (axis-value parts joined by '_') without the parts of the given axes.
std::string without_axes(const std::string& name, std::initializer_list<const char*> axes) {
  std::string out, part;
  std::stringstream parts(name);
  while (std::getline(parts, part, '_')) {
    const bool drop = std::any_of(axes.begin(), axes.end(), [&](const char* a) { return part.rfind(a, 0) == 0; });
    if (!drop) out += (out.empty() ? "" : "_") + part;
  }
  return out;
}

// A run's group: its folder name without the seed parts (recall-none_seed-1 -> recall-none).
std::string group_key(const Sweep&, const Run& run) {
  const std::string name = without_axes(run.name, {"seed-", "data-seed-"});
  return name.empty() ? "base" : name;
}

// A group's line in figure 6: its key without the learning-rate part, or, where the learning
// rate was its only axis, its recall and norm.
std::string series_key(const Group& g) {
  const std::string name = without_axes(g.key, {"lr-"});
  return name.empty() ? "recall-" + g.recall + "_norm-" + g.norm : name;
}

std::string lr_text(double lr) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", lr);
  return buf;
}

}  // namespace

PaperValues paper_values(const nlohmann::json& tables, const std::string& task_name, const std::string& norm,
                         const std::string& recall, double lr) {
  PaperValues p;
  if (!tables.is_object()) return p;
  const TaskSpec& spec = task(task_name).spec();
  p.val_table = spec.paper_val_table;
  p.hard_table = spec.paper_hard_table;
  if (tables.contains(p.val_table)) p.val = paper_value(tables[p.val_table], task_name, norm, recall, lr);
  if (tables.contains(p.hard_table)) p.hard = paper_value(tables[p.hard_table], task_name, norm, recall, lr);
  return p;
}

Report make_report(const Sweep& sw, const std::string& paper_tables) {
  nlohmann::json paper;
  if (!paper_tables.empty() && fs::exists(paper_tables)) paper = read_json_file(paper_tables);
  Report rep;
  rep.sweep = sw.name;
  rep.file = sw.file;
  rep.eval_iters = sw.eval.last;
  std::map<std::string, size_t> index;
  for (const Run& run : sw.runs) {
    const std::string key = group_key(sw, run);
    auto [it, fresh] = index.emplace(key, rep.groups.size());
    if (fresh) {
      Group g;
      g.key = key;
      g.task = run.spec.model.task;
      g.norm = to_string(run.spec.model.norm);
      g.recall = to_string(run.spec.model.recall);
      g.preset = run.spec.train.preset;
      g.lr = run.spec.train.lr;
      rep.groups.push_back(g);
    }
    rep.groups[it->second].runs_planned++;
  }
  std::vector<std::vector<double>> val(rep.groups.size()), hard(rep.groups.size()), rho(rep.groups.size());
  std::vector<std::vector<double>> settle(rep.groups.size()), radius(rep.groups.size()), below_1(rep.groups.size()),
      sensitivity(rep.groups.size()), cycle(rep.groups.size()), wander(rep.groups.size());
  // eval_scaling.json per group: rule -> level -> the runs' values.
  std::vector<std::vector<std::string>> rules(rep.groups.size());
  std::vector<std::map<std::string, std::vector<std::vector<double>>>> scaling_iters(rep.groups.size()),
      scaling_exact(rep.groups.size());
  // Figure 3's curves: the sum over each autonomous group's done runs at every iteration.
  std::vector<std::vector<double>> curve_val(rep.groups.size()), curve_hard(rep.groups.size());
  std::vector<int64_t> curve_n(rep.groups.size(), 0), training_iters(rep.groups.size(), 0);
  for (const Run& run : sw.runs) {
    const size_t g = index.at(group_key(sw, run));
    if (run_status(sw, run).state != State::kDone) continue;
    const std::string dir = sw.run_folder(run);
    const auto eval = read_report<EvalReport>(dir + "/" + RunFolder::kEval);
    if (eval.weights != RunFolder::kWeights) {
      rep.not_final.push_back(run.name + " (" + eval.weights + ")");
      continue;
    }
    auto last_exact = [&](const std::string& split, std::vector<double>& into) {
      const auto s = eval.splits.find(split);
      if (s != eval.splits.end() && !s->second.exact.empty()) into.push_back(100 * s->second.exact.back());
    };
    last_exact("val", val[g]);
    last_exact("hard", hard[g]);
    if (run.spec.model.recall == Recall::kNone) {
      auto add = [&](const std::string& split, std::vector<double>& sum) {
        const auto it = eval.splits.find(split);
        if (it == eval.splits.end()) return;
        if (sum.empty()) sum.assign(it->second.exact.size(), 0.0);
        for (size_t i = 0; i < sum.size() && i < it->second.exact.size(); ++i) sum[i] += 100 * it->second.exact[i];
      };
      add("val", curve_val[g]);
      add("hard", curve_hard[g]);
      ++curve_n[g];
      training_iters[g] = run.spec.train.training_iters;
    }
    if (fs::exists(dir + "/" + RunFolder::kAnalysis)) {
      const auto a = read_report<AnalysisReport>(dir + "/" + RunFolder::kAnalysis);
      if (!a.recall_spectral_radius.empty()) rho[g].push_back(a.recall_spectral_radius.front());
      const auto s = a.splits.count("val") ? a.splits.find("val") : a.splits.begin();
      if (s != a.splits.end()) {
        Group& gr = rep.groups[g];
        gr.analysis_split = s->first;
        settle[g].push_back(100 * s->second.convergence.settle);
        cycle[g].push_back(100 * s->second.convergence.cycle);
        wander[g].push_back(100 * s->second.convergence.wander);
        if (const auto& k = s->second.right) {
          gr.right = gr.right.value_or(0) + k->settle + k->cycle + k->diverge + k->wander;
          gr.right_on_cycle = gr.right_on_cycle.value_or(0) + k->cycle;
        }
        const auto& d = s->second.detail;
        if (d.count > 0) {
          radius[g].push_back(d.radius_median);
          below_1[g].push_back(100 * d.fraction_below_1);
          sensitivity[g].push_back(d.sensitivity_norm.median);
        }
      }
    }
    if (fs::exists(dir + "/" + RunFolder::kEvalScaling)) {
      const auto sc = read_report<ScalingReport>(dir + "/" + RunFolder::kEvalScaling);
      std::vector<std::string>& levels = rep.groups[g].scaling_levels;
      auto add = [&](const std::string& rule, size_t level, double iters, double exact) {
        if (std::find(rules[g].begin(), rules[g].end(), rule) == rules[g].end()) rules[g].push_back(rule);
        auto& it = scaling_iters[g][rule];
        auto& ex = scaling_exact[g][rule];
        it.resize(std::max(it.size(), levels.size()));
        ex.resize(std::max(ex.size(), levels.size()));
        it[level].push_back(iters);
        ex[level].push_back(100 * exact);
      };
      for (const ScalingLevelReport& l : sc.levels) {
        auto at = std::find(levels.begin(), levels.end(), l.label);
        if (at == levels.end()) at = levels.insert(levels.end(), l.label);
        const auto level = static_cast<size_t>(at - levels.begin());
        add("none", level, static_cast<double>(sc.max_iters), l.result.exact_at_max);
        for (const HaltRuleReport& r : l.result.rules) add(r.rule, level, r.mean_iters, r.exact);
      }
    }
    rep.groups[g].runs.push_back(run.name);
  }
  for (size_t g = 0; g < rep.groups.size(); ++g) {
    for (auto* c : {&curve_val[g], &curve_hard[g]})
      for (double& x : *c) x /= static_cast<double>(std::max<int64_t>(curve_n[g], 1));
  }
  for (size_t g = 0; g < rep.groups.size(); ++g) {
    Group& gr = rep.groups[g];
    gr.val = stat_of(val[g]);
    gr.hard = stat_of(hard[g]);
    gr.rho = stat_of(rho[g]);
    gr.settle = stat_of(settle[g]);
    gr.cycle = stat_of(cycle[g]);
    gr.wander = stat_of(wander[g]);
    gr.radius = stat_of(radius[g]);
    gr.radius_below_1 = stat_of(below_1[g]);
    gr.sensitivity = stat_of(sensitivity[g]);
    for (const std::string& rule : rules[g]) {
      Group::ScalingRow row{rule, {}, {}};
      for (size_t l = 0; l < gr.scaling_levels.size(); ++l) {
        const auto& it = scaling_iters[g][rule];
        const auto& ex = scaling_exact[g][rule];
        row.iters.push_back(l < it.size() ? stat_of(it[l]) : Stat{});
        row.exact.push_back(l < ex.size() ? stat_of(ex[l]) : Stat{});
      }
      gr.scaling.push_back(row);
    }
    const PaperValues p = paper_values(paper, gr.task, gr.norm, gr.recall, gr.lr);
    gr.paper_val = p.val;
    gr.paper_hard = p.hard;
  }
  std::map<std::string, size_t> best;  // task -> its best autonomous group (by mean hard accuracy)
  for (size_t g = 0; g < rep.groups.size(); ++g) {
    const Group& gr = rep.groups[g];
    if (parse_recall(gr.recall) != Recall::kNone || curve_n[g] == 0) continue;
    const auto it = best.find(gr.task);
    if (it == best.end() || gr.hard.mean > rep.groups[it->second].hard.mean) best[gr.task] = g;
  }
  for (const auto& [task, g] : best)
    rep.figure3.push_back({task, rep.groups[g].key, training_iters[g], curve_val[g], curve_hard[g]});
  for (size_t g = 0; g < rep.groups.size(); ++g) {
    const Group& gr = rep.groups[g];
    const Recall recall = parse_recall(gr.recall);
    const Norm norm = parse_norm(gr.norm);
    if ((recall == Recall::kExternal || recall == Recall::kInternal) && (norm == Norm::kPre || norm == Norm::kPeri) && gr.rho.n)
      rep.figure6.push_back({gr.task, series_key(gr), gr.recall, gr.norm, gr.lr, gr.rho});
  }
  std::sort(rep.figure6.begin(), rep.figure6.end(), [](const Figure6Point& a, const Figure6Point& b) {
    return std::tie(a.task, a.series, a.lr) < std::tie(b.task, b.series, b.lr);
  });
  return rep;
}

std::string to_markdown(const Report& r) {
  std::string out = "# Sweep " + r.sweep + " (" + r.file + ")\n\n";
  out += "Exact accuracy in percent after " + std::to_string(r.eval_iters) +
         " iterations of the final weights (the last epoch's, as the paper reports), mean ± standard error over the "
         "seeds that are done; the paper's value (mean of 3 seeds, paper preset) beside it, in italics where this "
         "sweep's preset is not the paper's.\n\n";
  if (!r.not_final.empty()) {
    out += "Left out, evaluated on other weights than the final ones:";
    for (const std::string& n : r.not_final) out += " " + n;
    out += ".\n\n";
  }
  // Tables 4 and 5 in the paper's layout: rows norm x recall, columns task x lr.
  std::vector<std::pair<std::string, double>> columns;
  std::vector<std::pair<std::string, std::string>> rows;
  for (const Group& g : r.groups) {
    if (std::find(columns.begin(), columns.end(), std::pair{g.task, g.lr}) == columns.end()) columns.push_back({g.task, g.lr});
    if (std::find(rows.begin(), rows.end(), std::pair{g.norm, g.recall}) == rows.end()) rows.push_back({g.norm, g.recall});
  }
  auto find = [&](const std::string& norm, const std::string& recall, const std::string& task, double lr) -> const Group* {
    const Group* found = nullptr;
    int64_t matches = 0;
    for (const Group& g : r.groups)
      if (g.norm == norm && g.recall == recall && g.task == task && g.lr == lr) found = &g, ++matches;
    return matches == 1 ? found : nullptr;  // several: the sweep varies more than the paper's axes
  };
  for (const auto& [title, which] : {std::pair{"val (table 4)", 0}, std::pair{"hard (table 5)", 1}}) {
    out += "## " + std::string(title) + "\n\n| norm | recall |";
    std::string rule = "|---|---|";
    for (const auto& [task, lr] : columns) {
      out += " " + task + " lr " + lr_text(lr) + " | paper |";
      rule += "---|---|";
    }
    out += "\n" + rule + "\n";
    for (const auto& [norm, recall] : rows) {
      out += "| " + norm + " | " + recall + " |";
      for (const auto& [task, lr] : columns) {
        const Group* g = find(norm, recall, task, lr);
        if (!g) {
          out += " - | - |";
          continue;
        }
        const std::string p = paper_cell(which == 0 ? g->paper_val : g->paper_hard);
        out += " " + cell(which == 0 ? g->val : g->hard) + " | " + (g->preset != "paper" && p != "-" ? "*" + p + "*" : p) + " |";
      }
      out += "\n";
    }
    out += "\n";
  }
  out += "## Every group\n\n| group | runs done | val | hard | rho(Wx) | paper val | paper hard |\n|---|---|---|---|---|---|---|\n";
  for (const Group& g : r.groups) {
    char rho[48] = "-";
    if (g.rho.n) std::snprintf(rho, sizeof rho, "%.4f", g.rho.mean);
    out += "| " + g.key + " | " + std::to_string(g.runs.size()) + "/" + std::to_string(g.runs_planned) + " | " +
           cell(g.val) + " | " + cell(g.hard) + " | " + rho + " | " + paper_cell(g.paper_val) + " | " +
           paper_cell(g.paper_hard) + " |\n";
  }
  if (std::any_of(r.groups.begin(), r.groups.end(), [](const Group& g) { return g.settle.n > 0; })) {
    std::string split;  // the groups' analysed split, where they agree
    for (const Group& g : r.groups)
      if (g.settle.n > 0) split = split.empty() || split == g.analysis_split ? g.analysis_split : "each group's split";
    out += "\n## Fixed points (analysis.json, " + split +
           ")\n\nPer group, mean ± standard error over its runs of: the percent of examples whose iteration settles, "
           "cycles or wanders (neither within the iterations); over the detailed examples, the median spectral radius "
           "rho(df/dx) at the reached state, the percent with rho < 1, and the median norm of the input sensitivity "
           "dx*/dx0; the examples exactly right after the last iteration, summed over the runs, and how many of them "
           "sit on a cycle (Knutson et al. 2024).\n\n"
           "| group | runs | settle % | cycle % | wander % | rho(df/dx) | rho < 1 % | dx*/dx0 | right (on a cycle) | hard "
           "|\n|---|---|---|---|---|---|---|---|---|---|\n";
    auto number = [](const Stat& s, const char* format) -> std::string {
      if (s.n == 0) return "-";
      char buf[64], se[32];
      std::snprintf(buf, sizeof buf, format, s.mean);
      if (s.n > 1) std::snprintf(se, sizeof se, format, s.standard_error);
      return s.n > 1 ? std::string(buf) + " ± " + se : std::string(buf);
    };
    for (const Group& g : r.groups) {
      if (g.settle.n == 0) continue;
      const std::string right =
          g.right ? std::to_string(*g.right) + " (" + std::to_string(g.right_on_cycle.value_or(0)) + ")" : "-";
      out += "| " + g.key + " | " + std::to_string(g.settle.n) + " | " + number(g.settle, "%.1f") + " | " +
             number(g.cycle, "%.1f") + " | " + number(g.wander, "%.1f") + " | " + number(g.radius, "%.4f") + " | " +
             number(g.radius_below_1, "%.1f") + " | " + number(g.sensitivity, "%.3g") + " | " + right + " | " +
             cell(g.hard) + " |\n";
    }
  }
  if (std::any_of(r.groups.begin(), r.groups.end(), [](const Group& g) { return !g.scaling.empty(); })) {
    out += "\n## Test-time compute against difficulty (eval_scaling.json)\n\nPer group and halting rule, mean over "
           "the runs that have one: iterations spent / exact % at the stop, per level (`none`: every example run to "
           "the end).\n";
    std::vector<std::string> shown;  // one table per list of levels
    for (const Group& g : r.groups) {
      if (g.scaling.empty()) continue;
      std::string header = "| group | rule |", rule = "|---|---|";
      for (const std::string& l : g.scaling_levels) header += " " + l + " |", rule += "---|";
      if (std::find(shown.begin(), shown.end(), header) == shown.end()) {
        shown.push_back(header);
        out += "\n" + header + "\n" + rule + "\n";
      }
      for (const Group::ScalingRow& row : g.scaling) {
        out += "| " + g.key + " | " + row.rule + " |";
        for (size_t l = 0; l < row.iters.size(); ++l) {
          char buf[64] = " - |";
          if (row.iters[l].n) std::snprintf(buf, sizeof buf, " %.1f / %.1f |", row.iters[l].mean, row.exact[l].mean);
          out += buf;
        }
        out += "\n";
      }
    }
  }
  if (!r.figure3.empty()) {
    out += "\n## Figure 3: the best autonomous configuration of each task, exact % against iterations\n\n"
           "| task | group | split |";
    std::vector<int64_t> at;
    for (int64_t t : {1, 5, 10, 30, 50, 100, 200, 300, 400, 500})
      if (t <= r.eval_iters) at.push_back(t);
    if (at.empty() || at.back() != r.eval_iters) at.push_back(r.eval_iters);
    std::string rule = "|---|---|---|";
    for (int64_t t : at) {
      out += " " + std::to_string(t) + " |";
      rule += "---|";
    }
    out += "\n" + rule + "\n";
    for (const Figure3Curve& c : r.figure3)
      for (const auto& [split, values] : {std::pair{"val", &c.val}, std::pair{"hard", &c.hard}}) {
        if (values->empty()) continue;
        out += "| " + c.task + " | " + c.group + " (trained to " + std::to_string(c.training_iters) + ") | " + split + " |";
        for (int64_t t : at) {
          char buf[32];
          std::snprintf(buf, sizeof buf, " %.1f |", (*values)[static_cast<size_t>(std::min<int64_t>(t, values->size()) - 1)]);
          out += buf;
        }
        out += "\n";
      }
  }
  if (!r.figure6.empty()) {
    out += "\n## Figure 6: rho(Wx) against the learning rate, recall without outer normalization\n\n"
           "| task | line | lr | rho(Wx) |\n|---|---|---|---|\n";
    for (const Figure6Point& p : r.figure6) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.4f ± %.4f", p.rho.mean, p.rho.standard_error);
      out += "| " + p.task + " | " + p.series + " | " + lr_text(p.lr) + " | " + buf + " |\n";
    }
  }
  return out;
}

std::string to_csv(const Report& r) {
  std::string out = "group,task,norm,recall,lr,preset,runs_done,runs_planned,val_mean,val_se,hard_mean,hard_se,rho_mean,paper_val,paper_hard\n";
  auto num = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return std::string(buf);
  };
  auto opt = [&](const std::optional<double>& v) { return v ? num(*v) : std::string(); };
  for (const Group& g : r.groups) {
    out += g.key + "," + g.task + "," + g.norm + "," + g.recall + "," + num(g.lr) + "," + g.preset + "," +
           std::to_string(g.runs.size()) + "," + std::to_string(g.runs_planned) + "," +
           (g.val.n ? num(g.val.mean) + "," + num(g.val.standard_error) : ",") + "," +
           (g.hard.n ? num(g.hard.mean) + "," + num(g.hard.standard_error) : ",") + "," +
           (g.rho.n ? num(g.rho.mean) : "") + "," + opt(g.paper_val) + "," + opt(g.paper_hard) + "\n";
  }
  return out;
}

nlohmann::json to_json(const Report& r) {
  nlohmann::json groups = nlohmann::json::array();
  auto stat = [](const Stat& s) { return nlohmann::json{{"n", s.n}, {"mean", s.mean}, {"standard_error", s.standard_error}}; };
  for (const Group& g : r.groups) {
    nlohmann::json j = {{"group", g.key}, {"task", g.task}, {"norm", g.norm}, {"recall", g.recall}, {"lr", g.lr},
                        {"preset", g.preset}, {"runs", g.runs}, {"runs_planned", g.runs_planned},
                        {"val", stat(g.val)}, {"hard", stat(g.hard)}, {"rho", stat(g.rho)},
                        {"settle", stat(g.settle)}, {"radius", stat(g.radius)}, {"radius_below_1", stat(g.radius_below_1)},
                        {"sensitivity", stat(g.sensitivity)}, {"cycle", stat(g.cycle)}, {"wander", stat(g.wander)},
                        {"analysis_split", g.analysis_split}};
    if (g.right) j["right"] = {{"exact", *g.right}, {"on_a_cycle", g.right_on_cycle.value_or(0)}};
    if (!g.scaling.empty()) {
      nlohmann::json rows = nlohmann::json::array();
      for (const Group::ScalingRow& row : g.scaling) {
        nlohmann::json iters = nlohmann::json::array(), exact = nlohmann::json::array();
        for (const Stat& s : row.iters) iters.push_back(stat(s));
        for (const Stat& s : row.exact) exact.push_back(stat(s));
        rows.push_back({{"rule", row.rule}, {"iters", iters}, {"exact", exact}});
      }
      j["scaling"] = {{"levels", g.scaling_levels}, {"rules", rows}};
    }
    j["paper_val"] = g.paper_val ? nlohmann::json(*g.paper_val) : nlohmann::json();
    j["paper_hard"] = g.paper_hard ? nlohmann::json(*g.paper_hard) : nlohmann::json();
    groups.push_back(j);
  }
  nlohmann::json figure3 = nlohmann::json::array(), figure6 = nlohmann::json::array();
  for (const Figure3Curve& c : r.figure3)
    figure3.push_back({{"task", c.task}, {"group", c.group}, {"training_iters", c.training_iters}, {"val", c.val},
                       {"hard", c.hard}});
  for (const Figure6Point& p : r.figure6)
    figure6.push_back({{"task", p.task}, {"series", p.series}, {"recall", p.recall}, {"norm", p.norm}, {"lr", p.lr}, {"rho", stat(p.rho)}});
  return {{"schema_version", kReportSchemaVersion}, {"sweep", r.sweep},   {"file", r.file},      {"eval_iters", r.eval_iters},
          {"weights", RunFolder::kWeights}, {"not_final", r.not_final},
          {"groups", groups},    {"figure3", figure3}, {"figure6", figure6}};
}

nlohmann::json read_report_json(const std::string& path, const std::string& shown_as) {
  using namespace json_reader;
  const std::string source = shown_as.empty() ? path : shown_as;
  return read_typed<nlohmann::json>(parse_json(read_file(path), source), source, [](const nlohmann::json& j) {
    read_schema_version(j, kReportSchemaVersion);
    nested("groups", [&] {
      if (!at(j, "groups").is_array()) throw KeyError("", "expected a list, got " + shown(j["groups"]));
    });
    return j;
  });
}

std::string write_report(const Sweep& sw, const std::string& paper_tables) {
  const Report r = make_report(sw, paper_tables);
  const std::string markdown = to_markdown(r);
  make_directories(sw.out);
  write_file_atomic(sw.out + "/report.csv", to_csv(r));
  write_file_atomic(sw.out + "/" + kReportFile, to_json(r).dump(2) + "\n");
  write_file_atomic(sw.out + "/report.md", markdown);
  return markdown;
}

}  // namespace looplab::sweep
