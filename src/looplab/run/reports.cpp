#include "looplab/run/reports.h"

#include "looplab/io/json_file.h"
#include "looplab/io/json_reader.h"

#include <algorithm>
#include <cstdio>

#include <cmath>
#include <limits>

#include "looplab/io/atomic_file.h"
#include "looplab/util/error.h"

namespace looplab {

using json = nlohmann::json;

namespace {

using namespace json_reader;
using json_reader::get;  // beside the get of Spread below

void get(const json& j, const std::string& key, Spread& out) {
  nested(key, [&] {
    const json& s = at(j, key);
    need_object(s);
    get(s, "median", out.median);
    get(s, "max", out.max);
  });
}
json spread(const Spread& s) { return {{"median", s.median}, {"max", s.max}}; }

// schema_version: absent in files from before versions (version 1).
template <typename Report>
int read_version(const json& j) {
  return read_schema_version(j, Report::kSchemaVersion);
}

}  // namespace

// ---- eval.json ---------------------------------------------------------------------------

void to_json(json& j, const CurveReport& r) {
  j = {{"count", r.count},           {"positions", r.positions},         {"iterations", r.iterations},
       {"exact", r.exact},           {"per_position", r.per_position},   {"relative_step", r.relative_step},
       {"unchanged", r.unchanged}};
}

void from_json(const json& j, CurveReport& r) {
  need_object(j);
  get(j, "count", r.count);
  get(j, "positions", r.positions);
  get(j, "iterations", r.iterations);
  get(j, "exact", r.exact);
  get(j, "per_position", r.per_position);
  get(j, "relative_step", r.relative_step);
  get(j, "unchanged", r.unchanged);
}

void to_json(json& j, const EvalReport& r) {
  j = {{"schema_version", EvalReport::kSchemaVersion},
       {"weights", r.weights},
       {"iters", {r.first, r.last}},
       {"splits", r.splits}};
}

void from_json(const json& j, EvalReport& r) {
  r.schema_version = read_version<EvalReport>(j);
  get(j, "weights", r.weights);
  std::vector<int64_t> iters;
  get(j, "iters", iters);
  if (iters.size() != 2) throw KeyError("iters", "expected [first, last], got " + shown(j.at("iters")));
  r.first = iters[0], r.last = iters[1];
  get(j, "splits", r.splits);
}

// ---- eval_accelerated.json ------------------------------------------------------------------

void to_json(json& j, const AcceleratedSplitReport& r) {
  j = {{"count", r.count},
       {"positions", r.positions},
       {"block_evaluations", r.block_evaluations},
       {"plain_block_evaluations", r.plain_block_evaluations},
       {"mean_evaluations", r.mean_evaluations},
       {"max_evaluations", r.max_evaluations},
       {"converged", r.converged},
       {"rejected", r.rejected},
       {"exact", r.exact},
       {"per_position", r.per_position},
       {"seconds", r.seconds}};
}

void from_json(const json& j, AcceleratedSplitReport& r) {
  need_object(j);
  get(j, "count", r.count);
  get(j, "positions", r.positions);
  get(j, "block_evaluations", r.block_evaluations);
  get(j, "plain_block_evaluations", r.plain_block_evaluations);
  get(j, "mean_evaluations", r.mean_evaluations);
  get(j, "max_evaluations", r.max_evaluations);
  get(j, "converged", r.converged);
  get(j, "rejected", r.rejected);
  get(j, "exact", r.exact);
  get(j, "per_position", r.per_position);
  get(j, "seconds", r.seconds);
}

void to_json(json& j, const AcceleratedReport& r) {
  j = {{"schema_version", AcceleratedReport::kSchemaVersion},
       {"weights", r.weights},
       {"max_iters", r.max_iters},
       {"tolerance", r.tolerance},
       {"anderson", r.anderson},
       {"splits", r.splits}};
}

void from_json(const json& j, AcceleratedReport& r) {
  r.schema_version = read_version<AcceleratedReport>(j);
  get(j, "weights", r.weights);
  get(j, "max_iters", r.max_iters);
  get(j, r.schema_version >= 2 ? "tolerance" : "early_exit", r.tolerance);
  get(j, "anderson", r.anderson);
  get(j, "splits", r.splits);
}

// ---- eval_halt.json, eval_scaling.json -------------------------------------------------------

void to_json(json& j, const HaltRuleReport& r) {
  j = {{"rule", r.rule}, {"threshold", r.threshold}, {"exact", r.exact}, {"mean_iters", r.mean_iters},
       {"most_iters", r.most_iters}};
}

void from_json(const json& j, HaltRuleReport& r) {
  need_object(j);
  get(j, "rule", r.rule);
  get(j, "threshold", r.threshold);
  get(j, "exact", r.exact);
  get(j, "mean_iters", r.mean_iters);
  get(j, "most_iters", r.most_iters);
}

void to_json(json& j, const HaltSplitReport& r) {
  j = {{"count", r.count}, {"exact_at_max", r.exact_at_max}, {"rules", r.rules}};
}

void from_json(const json& j, HaltSplitReport& r) {
  need_object(j);
  get(j, "count", r.count);
  get(j, "exact_at_max", r.exact_at_max);
  get_each(j, "rules", r.rules);
}

void to_json(json& j, const HaltReport& r) {
  j = {{"schema_version", HaltReport::kSchemaVersion}, {"weights", r.weights}, {"max_iters", r.max_iters},
       {"splits", r.splits}};
}

void from_json(const json& j, HaltReport& r) {
  r.schema_version = read_version<HaltReport>(j);
  get(j, "weights", r.weights);
  get(j, "max_iters", r.max_iters);
  get(j, "splits", r.splits);
}

void to_json(json& j, const ScalingLevelReport& r) {
  j = {{"label", r.label}, {"size", r.size}, {"difficulty", r.difficulty}, {"result", r.result}};
}

void from_json(const json& j, ScalingLevelReport& r) {
  need_object(j);
  get(j, "label", r.label);
  get(j, "size", r.size);
  // Schema 1 had no difficulty: its levels were prefix sums' bits, the size.
  if (j.contains("difficulty"))
    get(j, "difficulty", r.difficulty);
  else
    r.difficulty = static_cast<double>(r.size);
  get_one(j, "result", r.result);
}

void to_json(json& j, const ScalingReport& r) {
  j = {{"schema_version", ScalingReport::kSchemaVersion}, {"weights", r.weights}, {"max_iters", r.max_iters},
       {"measure", r.measure}, {"levels", r.levels}};
}

void from_json(const json& j, ScalingReport& r) {
  r.schema_version = read_version<ScalingReport>(j);
  get(j, "weights", r.weights);
  get(j, "max_iters", r.max_iters);
  r.measure = "bits";
  if (r.schema_version >= 2) get(j, "measure", r.measure);
  get_each(j, "levels", r.levels);
}

// ---- analysis.json ------------------------------------------------------------------------

void to_json(json& j, const ExampleReport& r) {
  j = {{"index", r.index}, {"behaviour", r.behaviour}, {"first_below", r.first_below}, {"final_step", r.final_step}};
  if (r.period) j["period"] = *r.period;
  if (r.detail) {
    const ExampleReport::Detail& d = *r.detail;
    j["radius"] = d.radius;
    j["eigenvalue"] = {d.eigenvalue_real, d.eigenvalue_imag};
    j["radius_residual"] = d.radius_residual;
    j["arnoldi_steps"] = d.arnoldi_steps;
    j["radius_converged"] = d.radius_converged;
    j["sensitivity_norm"] = d.sensitivity_norm;
    j["sensitivity_fd_norm"] = d.sensitivity_fd_norm;
    j["sensitivity_fd_difference"] = d.sensitivity_fd_difference;
    j["gmres_residual"] = d.gmres_residual;
    j["gmres_steps"] = d.gmres_steps;
    j["init_distance"] = {
        {"x0_vs_zero", d.x0_vs_zero}, {"x0_vs_noise", d.x0_vs_noise}, {"zero_vs_noise", d.zero_vs_noise}};
  }
}

void from_json(const json& j, ExampleReport& r) {
  need_object(j);
  get(j, "index", r.index);
  get(j, "behaviour", r.behaviour);
  get(j, "first_below", r.first_below);
  get(j, "final_step", r.final_step);
  r.period.reset();
  if (j.contains("period")) {
    int64_t period = 0;
    get(j, "period", period);
    r.period = period;
  }
  r.detail.reset();
  if (j.contains("radius")) {  // the Jacobian fields come together
    ExampleReport::Detail d;
    get(j, "radius", d.radius);
    std::vector<double> eigenvalue;
    get(j, "eigenvalue", eigenvalue);
    if (eigenvalue.size() != 2)
      throw KeyError("eigenvalue", "expected [real, imag], got " + shown(j.at("eigenvalue")));
    d.eigenvalue_real = eigenvalue[0], d.eigenvalue_imag = eigenvalue[1];
    get(j, "radius_residual", d.radius_residual);
    get(j, "arnoldi_steps", d.arnoldi_steps);
    get(j, "radius_converged", d.radius_converged);
    get(j, "sensitivity_norm", d.sensitivity_norm);
    get(j, "sensitivity_fd_norm", d.sensitivity_fd_norm);
    get(j, "sensitivity_fd_difference", d.sensitivity_fd_difference);
    get(j, "gmres_residual", d.gmres_residual);
    get(j, "gmres_steps", d.gmres_steps);
    get_object(j, "init_distance", [&](const json& s) {
      get(s, "x0_vs_zero", d.x0_vs_zero);
      get(s, "x0_vs_noise", d.x0_vs_noise);
      get(s, "zero_vs_noise", d.zero_vs_noise);
    });
    r.detail = d;
  }
}

void to_json(json& j, const AnalysisSplitReport& r) {
  const auto& c = r.convergence;
  const auto& a = r.accuracy;
  const auto& o = r.overthinking;
  const auto& d = r.detail;
  json detail = {{"count", d.count}};
  if (d.count > 0) {
    detail["radius"] = {{"median", d.radius_median},
                        {"max", d.radius_max},
                        {"fraction_below_1", d.fraction_below_1},
                        {"fraction_converged", d.fraction_converged}};
    detail["sensitivity"] = {{"norm", spread(d.sensitivity_norm)},
                             {"fd_norm", spread(d.sensitivity_fd_norm)},
                             {"implicit_vs_fd", spread(d.implicit_vs_fd)},
                             {"implicit_vs_fd_where_radius_below_1", spread(d.implicit_vs_fd_where_radius_below_1)}};
    detail["init_distance"] = {{"x0_vs_zero", spread(d.x0_vs_zero)},
                               {"x0_vs_noise", spread(d.x0_vs_noise)},
                               {"zero_vs_noise", spread(d.zero_vs_noise)}};
  }
  j = {{"count", r.count},
       {"positions", r.positions},
       {"max_iters", r.max_iters},
       {"tolerance", r.tolerance},
       {"convergence",
        {{"settle", c.settle},
         {"cycle", c.cycle},
         {"diverge", c.diverge},
         {"wander", c.wander},
         {"first_below", spread(c.first_below)},
         {"final_step", spread(c.final_step)}}},
       {"accuracy", {{"iterations", a.iterations}, {"exact", a.exact}, {"per_position", a.per_position}}},
       {"overthinking",
        {{"training_iters", o.training_iters},
         {"exact_at_training_iters", o.exact_at_training_iters},
         {"best_exact", o.best_exact},
         {"best_iteration", o.best_iteration},
         {"exact_at_max_iters", o.exact_at_max_iters}}},
       {"detail", detail},
       {"examples", r.examples}};
}

void from_json(const json& j, AnalysisSplitReport& r) {
  need_object(j);
  get(j, "count", r.count);
  get(j, "positions", r.positions);
  get(j, "max_iters", r.max_iters);
  get(j, "tolerance", r.tolerance);
  get_object(j, "convergence", [&](const json& c) {
    get(c, "settle", r.convergence.settle);
    get(c, "cycle", r.convergence.cycle);
    get(c, "diverge", r.convergence.diverge);
    get(c, "wander", r.convergence.wander);
    get(c, "first_below", r.convergence.first_below);
    get(c, "final_step", r.convergence.final_step);
  });
  get_object(j, "accuracy", [&](const json& a) {
    get(a, "iterations", r.accuracy.iterations);
    get(a, "exact", r.accuracy.exact);
    get(a, "per_position", r.accuracy.per_position);
  });
  get_object(j, "overthinking", [&](const json& o) {
    get(o, "training_iters", r.overthinking.training_iters);
    get(o, "exact_at_training_iters", r.overthinking.exact_at_training_iters);
    get(o, "best_exact", r.overthinking.best_exact);
    get(o, "best_iteration", r.overthinking.best_iteration);
    get(o, "exact_at_max_iters", r.overthinking.exact_at_max_iters);
  });
  get_object(j, "detail", [&](const json& d) {
    auto& out = r.detail;
    out = AnalysisSplitReport::Detail{};
    get(d, "count", out.count);
    if (out.count <= 0) return;
    get_object(d, "radius", [&](const json& s) {
      get(s, "median", out.radius_median);
      get(s, "max", out.radius_max);
      get(s, "fraction_below_1", out.fraction_below_1);
      get(s, "fraction_converged", out.fraction_converged);
    });
    get_object(d, "sensitivity", [&](const json& s) {
      get(s, "norm", out.sensitivity_norm);
      get(s, "fd_norm", out.sensitivity_fd_norm);
      get(s, "implicit_vs_fd", out.implicit_vs_fd);
      get(s, "implicit_vs_fd_where_radius_below_1", out.implicit_vs_fd_where_radius_below_1);
    });
    get_object(d, "init_distance", [&](const json& s) {
      get(s, "x0_vs_zero", out.x0_vs_zero);
      get(s, "x0_vs_noise", out.x0_vs_noise);
      get(s, "zero_vs_noise", out.zero_vs_noise);
    });
  });
  nested("examples", [&] {
    const json& e = at(j, "examples");
    if (!e.is_array()) throw KeyError("", "expected a list, got " + shown(e));
    r.examples.assign(e.size(), ExampleReport{});
    for (size_t i = 0; i < e.size(); ++i) nested(std::to_string(i), [&] { from_json(e[i], r.examples[i]); });
  });
}

void to_json(json& j, const AnalysisReport& r) {
  j = {{"schema_version", AnalysisReport::kSchemaVersion},
       {"weights", r.weights},
       {"recall_spectral_radius", r.recall_spectral_radius},
       {"splits", r.splits}};
}

void from_json(const json& j, AnalysisReport& r) {
  r.schema_version = read_version<AnalysisReport>(j);
  get(j, "weights", r.weights);
  get(j, "recall_spectral_radius", r.recall_spectral_radius);
  get(j, "splits", r.splits);
}

// ---- metrics.jsonl ------------------------------------------------------------------------

void to_json(json& j, const EpochMetrics& r) {
  j = {{"schema_version", EpochMetrics::kSchemaVersion},
       {"epoch", r.epoch},
       {"lr", r.lr},
       {"loss", r.loss},
       {"train_exact", r.train_exact},
       {"val_exact", r.val_exact},
       {"val_iters", r.val_iters},
       {"seconds", r.seconds},
       {"peak_rss_mib", r.peak_rss_mib}};
  if (r.val_per_position) j["val_per_position"] = *r.val_per_position;
  if (r.forward_converged) j["forward_converged"] = *r.forward_converged;
  if (r.adjoint_converged) j["adjoint_converged"] = *r.adjoint_converged;
  if (r.jacobian) j["jacobian"] = *r.jacobian;
  if (r.halt_loss) j["halt_loss"] = *r.halt_loss;
  if (r.halt_accuracy) j["halt_accuracy"] = *r.halt_accuracy;
}

void from_json(const json& j, EpochMetrics& r) {
  r.schema_version = read_version<EpochMetrics>(j);
  get(j, "epoch", r.epoch);
  get(j, "lr", r.lr);
  get(j, "loss", r.loss);
  const bool v1 = r.schema_version < 2;
  get(j, v1 ? "train_accuracy" : "train_exact", r.train_exact);
  get(j, v1 ? "val_accuracy" : "val_exact", r.val_exact);
  r.val_per_position.reset();
  if (j.contains("val_per_position")) {
    double v = 0;
    get(j, "val_per_position", v);
    r.val_per_position = v;
  }
  get(j, "val_iters", r.val_iters);
  get(j, "seconds", r.seconds);
  get(j, "peak_rss_mib", r.peak_rss_mib);
  for (auto [key, field] : {std::make_pair("forward_converged", &r.forward_converged),
                            std::make_pair("adjoint_converged", &r.adjoint_converged),
                            std::make_pair("jacobian", &r.jacobian), std::make_pair("halt_loss", &r.halt_loss),
                            std::make_pair("halt_accuracy", &r.halt_accuracy)}) {
    field->reset();
    if (j.contains(key)) {
      double v = 0;
      get(j, key, v);
      *field = v;
    }
  }
}

// ---- files --------------------------------------------------------------------------------

template <typename Report>
Report read_report(const std::string& path) {
  return read_typed<Report>(read_json_file(path), path);
}

template <typename Report>
void write_report(const std::string& path, const Report& report) {
  write_file_atomic(path, json(report).dump() + "\n");
}

template EvalReport read_report<EvalReport>(const std::string&);
template AcceleratedReport read_report<AcceleratedReport>(const std::string&);
template AnalysisReport read_report<AnalysisReport>(const std::string&);
template void write_report<EvalReport>(const std::string&, const EvalReport&);
template void write_report<AcceleratedReport>(const std::string&, const AcceleratedReport&);
template void write_report<AnalysisReport>(const std::string&, const AnalysisReport&);
template HaltReport read_report<HaltReport>(const std::string&);
template ScalingReport read_report<ScalingReport>(const std::string&);
template void write_report<HaltReport>(const std::string&, const HaltReport&);
template void write_report<ScalingReport>(const std::string&, const ScalingReport&);

std::vector<EpochMetrics> read_metrics(const std::string& path) {
  const std::string text = read_file(path);
  // The lines with text, and their numbers (1-based).
  std::vector<std::pair<size_t, std::string>> lines;
  size_t start = 0, number = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    ++number;
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") != std::string::npos) lines.emplace_back(number, std::move(line));
    start = end + 1;
  }
  std::vector<EpochMetrics> out;
  out.reserve(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string where = path + ":" + std::to_string(lines[i].first);
    json j;
    try {
      j = json::parse(lines[i].second);
    } catch (const json::exception& e) {
      if (i + 1 == lines.size()) break;  // a torn last line from a kill mid-write: that epoch is redone
      throw Error(where + ": not valid JSON (" + e.what() + ")");
    }
    try {
      out.push_back(j.get<EpochMetrics>());
    } catch (const json::exception& e) {
      throw Error(where + ": " + e.what());
    }
  }
  return out;
}

void write_metrics(const std::string& path, const std::vector<EpochMetrics>& lines) {
  std::string text;
  for (const EpochMetrics& m : lines) text += json(m).dump() + "\n";
  write_file_atomic(path, text);
}

std::string to_text(const EvalReport& r, const std::vector<std::string>& order) {
  std::vector<int64_t> rows;
  for (int64_t t : {1, 5, 10, 30, 50, 100, 200, 300, 500})
    if (t >= r.first && t <= r.last) rows.push_back(t);
  if (rows.empty() || rows.back() != r.last) rows.push_back(r.last);
  std::string out;
  char buf[256];
  for (const std::string& name : order) {
    const CurveReport& c = r.splits.at(name);
    std::snprintf(buf, sizeof buf, "%s (%lld examples, %lld positions)\n  %6s %9s %12s %14s %11s\n", name.c_str(),
                  static_cast<long long>(c.count), static_cast<long long>(c.positions), "iters", "exact %",
                  "position %", "relative step", "unchanged %");
    out += buf;
    for (int64_t t : rows) {
      const size_t i = static_cast<size_t>(t - r.first);
      std::snprintf(buf, sizeof buf, "  %6lld %9.2f %12.2f %14.3e %11.2f\n", static_cast<long long>(t), 100 * c.exact[i],
                    100 * c.per_position[i], c.relative_step[i], 100 * c.unchanged[i]);
      out += buf;
    }
  }
  return out;
}

std::string to_text(const AcceleratedReport& r, const std::vector<std::string>& order) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-6s %8s %10s %14s %12s %9s %12s %11s %9s\n", "split", "examples", "positions",
                "block evals", "evals/ex.", "max", "converged %", "exact %", "seconds");
  std::string out = buf;
  for (const std::string& name : order) {
    const AcceleratedSplitReport& e = r.splits.at(name);
    std::snprintf(buf, sizeof buf, "%-6s %8lld %10lld %14lld %12.1f %9lld %12.2f %11.2f %9.2f\n", name.c_str(),
                  static_cast<long long>(e.count), static_cast<long long>(e.positions),
                  static_cast<long long>(e.block_evaluations), e.mean_evaluations,
                  static_cast<long long>(e.max_evaluations), 100 * e.converged, 100 * e.exact, e.seconds);
    out += buf;
  }
  std::snprintf(buf, sizeof buf, "(plain iteration: %lld block evaluations per example)\n",
                static_cast<long long>(r.max_iters));
  return out + buf;
}

namespace {

// One table row per rule of a split or level: "exact % / mean iterations (most)"; the first
// column `width` wide.
std::string halt_rows(const std::string& name, const HaltSplitReport& s, int64_t max_iters, int width = 12) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-*s %8lld  %-12s %10s %11.2f %11lld %6lld\n", width, name.c_str(),
                static_cast<long long>(s.count), "none", "", 100 * s.exact_at_max, static_cast<long long>(max_iters),
                static_cast<long long>(max_iters));
  std::string out = buf;
  for (const HaltRuleReport& r : s.rules) {
    std::snprintf(buf, sizeof buf, "%-*s %8s  %-12s %10.3g %11.2f %11.1f %6lld\n", width, "", "", r.rule.c_str(),
                  r.threshold, 100 * r.exact, r.mean_iters, static_cast<long long>(r.most_iters));
    out += buf;
  }
  return out;
}

std::string halt_header(const char* first, int width = 12) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-*s %8s  %-12s %10s %11s %11s %6s\n", width, first, "examples", "halting",
                "threshold", "exact %", "mean iters", "most");
  return buf;
}

}  // namespace

std::string to_text(const HaltReport& r, const std::vector<std::string>& order) {
  std::string out = halt_header("split");
  for (const std::string& name : order) out += halt_rows(name, r.splits.at(name), r.max_iters);
  return out;
}

std::string to_text(const ScalingReport& r) {
  // Levels by a rating show the median rating of their examples beside the band.
  const bool rated = r.measure != "bits";
  std::vector<std::string> names;
  int width = 12;
  for (const ScalingLevelReport& l : r.levels) {
    char median[64];
    std::snprintf(median, sizeof median, " (median %g)", l.difficulty);
    names.push_back(l.label + (rated ? median : ""));
    width = std::max(width, static_cast<int>(names.back().size()));
  }
  std::string out = rated ? "levels by " + r.measure + "\n" : "";
  out += halt_header("level", width);
  for (size_t i = 0; i < r.levels.size(); ++i) out += halt_rows(names[i], r.levels[i].result, r.max_iters, width);
  return out;
}

}  // namespace looplab
