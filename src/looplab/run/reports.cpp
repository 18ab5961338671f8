#include "looplab/run/reports.h"

#include "looplab/io/json_fields.h"
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
using json_fields::read_fields;
using json_fields::write_fields;

// schema_version: absent in files from before versions (version 1).
template <typename Report>
int read_version(const json& j) {
  return read_schema_version(j, Report::kSchemaVersion);
}

// A versioned report: its field list under the current schema_version, read under the file's.
template <typename Report>
void write_versioned(json& j, const Report& r) {
  write_fields(j, r);
  j["schema_version"] = Report::kSchemaVersion;
}
template <typename Report>
void read_versioned(const json& j, Report& r) {
  r.schema_version = read_version<Report>(j);
  read_fields(j, r, r.schema_version);
}

json spread(const Spread& s) {
  json j;
  write_fields(j, s);
  return j;
}

}  // namespace

// The field lists: each report's keys and members, once (io/json_fields.h).
namespace json_fields {
using A = AnalysisSplitReport;
template <> struct Fields<CurveReport> {
  static constexpr auto list = std::make_tuple(
      field("count", &CurveReport::count), field("positions", &CurveReport::positions),
      field("iterations", &CurveReport::iterations), field("exact", &CurveReport::exact),
      field("per_position", &CurveReport::per_position), field("relative_step", &CurveReport::relative_step),
      field("unchanged", &CurveReport::unchanged));
};
template <> struct Fields<AcceleratedSplitReport> {
  using R = AcceleratedSplitReport;
  static constexpr auto list = std::make_tuple(
      field("count", &R::count), field("positions", &R::positions), field("block_evaluations", &R::block_evaluations),
      field("plain_block_evaluations", &R::plain_block_evaluations), field("mean_evaluations", &R::mean_evaluations),
      field("max_evaluations", &R::max_evaluations), field("converged", &R::converged), field("rejected", &R::rejected),
      field("exact", &R::exact), field("per_position", &R::per_position), field("seconds", &R::seconds));
};
template <> struct Fields<AcceleratedReport> {
  using R = AcceleratedReport;
  static constexpr auto list = std::make_tuple(
      field("weights", &R::weights), field("max_iters", &R::max_iters),
      renamed("tolerance", &R::tolerance, "early_exit", 2),  // version 1: "early_exit"
      field("anderson", &R::anderson), field("splits", &R::splits));
};
template <> struct Fields<HaltRuleReport> {
  using R = HaltRuleReport;
  static constexpr auto list =
      std::make_tuple(field("rule", &R::rule), field("threshold", &R::threshold), field("exact", &R::exact),
                      field("mean_iters", &R::mean_iters), field("most_iters", &R::most_iters));
};
template <> struct Fields<HaltSplitReport> {
  using R = HaltSplitReport;
  static constexpr auto list =
      std::make_tuple(field("count", &R::count), field("exact_at_max", &R::exact_at_max), field("rules", &R::rules));
};
template <> struct Fields<HaltReport> {
  using R = HaltReport;
  static constexpr auto list =
      std::make_tuple(field("weights", &R::weights), field("max_iters", &R::max_iters), field("splits", &R::splits));
};
template <> struct Fields<TraceChange> {
  static constexpr auto list =
      std::make_tuple(field("iteration", &TraceChange::iteration), field("answer", &TraceChange::answer));
};
template <> struct Fields<TraceExample> {
  using R = TraceExample;
  static constexpr auto list = std::make_tuple(field("index", &R::index), field("input", &R::input),
                                               field("target", &R::target), field("answers", &R::answers));
};
template <> struct Fields<TraceReport> {
  using R = TraceReport;
  static constexpr auto list =
      std::make_tuple(field("weights", &R::weights), field("task", &R::task), field("split", &R::split),
                      field("grid", &R::grid), field("channels", &R::channels), field("max_iters", &R::max_iters),
                      field("examples", &R::examples));
};
template <> struct Fields<Spread> {
  static constexpr auto list = std::make_tuple(field("median", &Spread::median), field("max", &Spread::max));
};
template <> struct Fields<A::Convergence> {
  using R = A::Convergence;
  static constexpr auto list =
      std::make_tuple(field("settle", &R::settle), field("cycle", &R::cycle), field("diverge", &R::diverge),
                      field("wander", &R::wander), field("first_below", &R::first_below), field("final_step", &R::final_step));
};
template <> struct Fields<A::Right> {
  using R = A::Right;
  static constexpr auto list = std::make_tuple(field("settle", &R::settle), field("cycle", &R::cycle),
                                               field("diverge", &R::diverge), field("wander", &R::wander));
};
template <> struct Fields<A::Accuracy> {
  using R = A::Accuracy;
  static constexpr auto list = std::make_tuple(field("iterations", &R::iterations), field("exact", &R::exact),
                                               field("per_position", &R::per_position));
};
template <> struct Fields<A::Overthinking> {
  using R = A::Overthinking;
  static constexpr auto list =
      std::make_tuple(field("training_iters", &R::training_iters),
                      field("exact_at_training_iters", &R::exact_at_training_iters), field("best_exact", &R::best_exact),
                      field("best_iteration", &R::best_iteration), field("exact_at_max_iters", &R::exact_at_max_iters));
};
// "detail" is laid out otherwise than its struct (to_json below).
template <> struct Fields<AnalysisSplitReport> {
  using R = AnalysisSplitReport;
  static constexpr auto list = std::make_tuple(
      field("count", &R::count), field("positions", &R::positions), field("max_iters", &R::max_iters),
      field("tolerance", &R::tolerance), field("convergence", &R::convergence), field("accuracy", &R::accuracy),
      field("overthinking", &R::overthinking), field("right", &R::right), field("examples", &R::examples));
};
template <> struct Fields<AnalysisReport> {
  using R = AnalysisReport;
  static constexpr auto list = std::make_tuple(
      field("weights", &R::weights), field("recall_spectral_radius", &R::recall_spectral_radius), field("splits", &R::splits),
      field("hard_size", &R::hard_size));
};
template <> struct Fields<EpochMetrics> {
  using R = EpochMetrics;
  static constexpr auto list = std::make_tuple(
      field("epoch", &R::epoch), field("lr", &R::lr), field("loss", &R::loss),
      renamed("train_exact", &R::train_exact, "train_accuracy", 2),  // version 1's names
      renamed("val_exact", &R::val_exact, "val_accuracy", 2), field("val_per_position", &R::val_per_position),
      field("val_iters", &R::val_iters), field("seconds", &R::seconds), field("peak_rss_mib", &R::peak_rss_mib),
      field("forward_converged", &R::forward_converged), field("adjoint_converged", &R::adjoint_converged),
      field("jacobian", &R::jacobian), field("halt_loss", &R::halt_loss), field("halt_accuracy", &R::halt_accuracy));
};
}  // namespace json_fields

// ---- eval.json ---------------------------------------------------------------------------

void to_json(json& j, const CurveReport& r) { write_fields(j, r); }
void from_json(const json& j, CurveReport& r) { read_fields(j, r); }

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

void to_json(json& j, const AcceleratedSplitReport& r) { write_fields(j, r); }
void from_json(const json& j, AcceleratedSplitReport& r) { read_fields(j, r); }
void to_json(json& j, const AcceleratedReport& r) { write_versioned(j, r); }
void from_json(const json& j, AcceleratedReport& r) { read_versioned(j, r); }

// ---- eval_halt.json, eval_scaling.json -------------------------------------------------------

void to_json(json& j, const HaltRuleReport& r) { write_fields(j, r); }
void from_json(const json& j, HaltRuleReport& r) { read_fields(j, r); }
void to_json(json& j, const HaltSplitReport& r) { write_fields(j, r); }
void from_json(const json& j, HaltSplitReport& r) { read_fields(j, r); }
void to_json(json& j, const HaltReport& r) { write_versioned(j, r); }
void from_json(const json& j, HaltReport& r) { read_versioned(j, r); }

char trace_char(int64_t c) {
  if (c < 0 || c >= 36) throw Error("a trace answer holds classes 0 to 35, not " + std::to_string(c));
  return static_cast<char>(c < 10 ? '0' + c : 'a' + (c - 10));
}

int64_t trace_class(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'z') return ch - 'a' + 10;
  throw Error(std::string("a trace answer holds the characters 0-9 and a-z, not '") + ch + "'");
}

void to_json(json& j, const TraceChange& r) { write_fields(j, r); }
void from_json(const json& j, TraceChange& r) { read_fields(j, r); }
void to_json(json& j, const TraceExample& r) { write_fields(j, r); }
void from_json(const json& j, TraceExample& r) { read_fields(j, r); }
void to_json(json& j, const TraceReport& r) { write_versioned(j, r); }

// Beyond the keys' types: every answer and the target one character per position, in the
// alphabet, the input positions x channels numbers, the changes at increasing iterations from 1
// to max_iters.
void from_json(const json& j, TraceReport& r) {
  read_versioned(j, r);
  int64_t positions = 1;
  for (const int64_t g : r.grid) {
    if (g < 1) throw KeyError("grid", "expected positive sides, got " + shown(j.at("grid")));
    positions *= g;
  }
  if (r.grid.empty()) throw KeyError("grid", "expected at least one side");
  if (r.channels < 1) throw KeyError("channels", "expected at least 1");
  if (r.max_iters < 1) throw KeyError("max_iters", "expected at least 1");
  for (size_t e = 0; e < r.examples.size(); ++e) {
    const TraceExample& x = r.examples[e];
    const std::string at = "examples/" + std::to_string(e) + "/";
    auto check_answer = [&](const std::string& key, const std::string& a) {
      if (static_cast<int64_t>(a.size()) != positions)
        throw KeyError(at + key, "expected " + std::to_string(positions) + " characters, got " + std::to_string(a.size()));
      for (const char ch : a) try {
          trace_class(ch);
        } catch (const Error& err) {
          throw KeyError(at + key, err.what());
        }
    };
    if (static_cast<int64_t>(x.input.size()) != positions * r.channels)
      throw KeyError(at + "input", "expected " + std::to_string(positions * r.channels) + " numbers, got " +
                                       std::to_string(x.input.size()));
    check_answer("target", x.target);
    if (x.answers.empty() || x.answers.front().iteration != 1)
      throw KeyError(at + "answers", "expected the answer after iteration 1 first");
    for (size_t c = 0; c < x.answers.size(); ++c) {
      const std::string key = "answers/" + std::to_string(c);
      if (c > 0 && x.answers[c].iteration <= x.answers[c - 1].iteration)
        throw KeyError(at + key + "/iteration", "expected increasing iterations");
      if (x.answers[c].iteration > r.max_iters)
        throw KeyError(at + key + "/iteration", "beyond max_iters " + std::to_string(r.max_iters));
      check_answer(key + "/answer", x.answers[c].answer);
    }
  }
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
  if (r.right) j["right"] = *r.right;
  if (r.answer_from) j["answer_from"] = *r.answer_from;
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
  r.right.reset();
  if (j.contains("right")) {
    bool right = false;
    get(j, "right", right);
    r.right = right;
  }
  r.answer_from.reset();
  if (j.contains("answer_from")) {
    int64_t from = 0;
    get(j, "answer_from", from);
    r.answer_from = from;
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
  write_fields(j, r);
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
  j["detail"] = detail;
}

void from_json(const json& j, AnalysisSplitReport& r) {
  read_fields(j, r);
  using json_fields::read_value;
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
      read_value(s, "norm", out.sensitivity_norm);
      read_value(s, "fd_norm", out.sensitivity_fd_norm);
      read_value(s, "implicit_vs_fd", out.implicit_vs_fd);
      read_value(s, "implicit_vs_fd_where_radius_below_1", out.implicit_vs_fd_where_radius_below_1);
    });
    get_object(d, "init_distance", [&](const json& s) {
      read_value(s, "x0_vs_zero", out.x0_vs_zero);
      read_value(s, "x0_vs_noise", out.x0_vs_noise);
      read_value(s, "zero_vs_noise", out.zero_vs_noise);
    });
  });
}

void to_json(json& j, const AnalysisReport& r) { write_versioned(j, r); }
void from_json(const json& j, AnalysisReport& r) { read_versioned(j, r); }

// ---- metrics.jsonl ------------------------------------------------------------------------

// Version 1 named the exact accuracies train_accuracy and val_accuracy (the field list's old keys).
void to_json(json& j, const EpochMetrics& r) { write_versioned(j, r); }
void from_json(const json& j, EpochMetrics& r) { read_versioned(j, r); }

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
template TraceReport read_report<TraceReport>(const std::string&);
template void write_report<TraceReport>(const std::string&, const TraceReport&);
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
  // Levels by a rating show the median rating of their examples beside the band (levels by
  // bits or by maze size are of one difficulty each).
  const bool rated = r.measure != "bits" && r.measure != "size";
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
