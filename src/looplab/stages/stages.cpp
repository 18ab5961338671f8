#include "looplab/stages/stages.h"

#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>

#include <nlohmann/json.hpp>

#include "looplab/eval/accelerated.h"
#include "looplab/eval/evaluate.h"
#include "looplab/io/atomic_file.h"
#include "looplab/run/model_dir.h"
#include "looplab/run/run_dir.h"
#include "looplab/runtime.h"
#include "looplab/util/error.h"
#include "looplab/util/progress.h"

namespace looplab {

namespace {

namespace fs = std::filesystem;

// What a partial evaluation must share with this one to be gone on with: the weights (by
// content: a run trained further has other best weights), the iterations, examples, batch
// (the sums are added batch by batch), device and dtype. std::hash is enough here: a mismatch
// from another build's hash only costs starting over.
nlohmann::json partial_settings(const std::string& weights, const EvalRunOptions& o) {
  const std::string bytes = read_file(weights);
  return {{"weights", fs::path(weights).filename().string()},
          {"weights_bytes", bytes.size()},
          {"weights_hash", std::hash<std::string>{}(bytes)},
          {"last", o.last},
          {"count", o.count},
          {"batch", o.batch},
          {"device", o.device},
          {"dtype", o.dtype},
          {"precision", o.precision}};
}

// DIR/eval.partial.json's sums per split when they were left by an evaluation with these
// settings; otherwise none, saying why on stderr (the file is only a record of work done: an
// unreadable one costs the work, never the evaluation).
std::map<std::string, CurveSums> read_partial(const std::string& file, const nlohmann::json& settings) {
  if (!fs::exists(file)) return {};
  try {
    const nlohmann::json j = nlohmann::json::parse(read_file(file));
    if (j.at("settings") != settings) {
      std::fprintf(stderr, "%s: left by an evaluation with other weights or settings; starting over\n", file.c_str());
      return {};
    }
    std::map<std::string, CurveSums> sums;
    for (const auto& [name, v] : j.at("splits").items())
      sums[name] = {v.at("done").get<int64_t>(), v.at("exact").get<std::vector<double>>(),
                    v.at("positions").get<std::vector<double>>(), v.at("step").get<std::vector<double>>(),
                    v.at("unchanged").get<std::vector<double>>()};
    return sums;
  } catch (const nlohmann::json::exception& e) {
    std::fprintf(stderr, "%s: unreadable (%s); starting the evaluation over\n", file.c_str(), e.what());
    return {};
  }
}

void write_partial(const std::string& file, const nlohmann::json& settings, const std::map<std::string, CurveSums>& sums) {
  nlohmann::json splits = nlohmann::json::object();
  for (const auto& [name, s] : sums)
    splits[name] = {{"done", s.done}, {"exact", s.exact}, {"positions", s.positions}, {"step", s.step},
                    {"unchanged", s.unchanged}};
  write_file_atomic(file, nlohmann::json{{"schema_version", 1}, {"settings", settings}, {"splits", splits}}.dump() + "\n");
}

}  // namespace

EvalReport evaluate_run(const std::string& dir, const EvalRunOptions& o) {
  if (o.first < 1 || o.last < o.first) throw Error("iters: need 1 <= FIRST <= LAST");
  if (o.batch < 1 || o.count < 0) throw Error("batch must be >= 1 and count >= 0");
  const RunDir run(dir);
  const std::string weights = run.weights(o.weights);
  LoopedTransformer model = load_model(dir, parse_device(o.device), parse_dtype(o.dtype), weights);
  model->eval();
  EvalRunOptions settled = o;
  if (settled.precision.empty()) settled.precision = run.is_training_run() ? run.spec().train.precision : "float32";
  model->set_mixed_precision(is_mixed_precision(settled.precision));
  DataOptions data = run.evaluation_data();
  EvalReport report{EvalReport::kSchemaVersion, weights, o.first, o.last, {}};
  // A stopped evaluation goes on from its last batch: a sweep's evaluation at 500 iterations
  // can take an hour, the paper preset's on its hard split days.
  const std::string partial = run.file(RunDir::kEvalPartial);
  const nlohmann::json settings = partial_settings(run.file(weights), settled);
  std::map<std::string, CurveSums> sums = read_partial(partial, settings);
  for (const std::string& name : o.splits) {
    if (o.count) data.set_count(name, o.count);
    const Split split = load_split(data, name);
    CurveSums& so_far = sums[name];
    if (!so_far.fits(split.size(), o.last)) {
      std::fprintf(stderr, "%s: its %s sums do not fit this split; starting that split over\n", partial.c_str(), name.c_str());
      so_far = {};
    }
    if (so_far.done > 0 && so_far.done < split.size())
      std::fprintf(stderr, "evaluating %s: going on from example %lld of %lld (%s)\n", name.c_str(),
                   static_cast<long long>(so_far.done), static_cast<long long>(split.size()), partial.c_str());
    // A line per tenth in a log.
    Progress progress("evaluating " + name);
    CurveReport c = evaluate_curve(*model, split, o.last, o.batch, so_far,
                                   [&](const CurveSums&) { write_partial(partial, settings, sums); }, std::ref(progress));
    progress.clear();
    const auto cut = static_cast<std::ptrdiff_t>(o.first - 1);
    for (auto* v : {&c.exact, &c.per_position, &c.relative_step, &c.unchanged}) v->erase(v->begin(), v->begin() + cut);
    c.iterations.erase(c.iterations.begin(), c.iterations.begin() + cut);
    report.splits[name] = c;
  }
  write_report(run.file(RunDir::kEval), report);
  fs::remove(partial);
  return report;
}

AcceleratedReport evaluate_run_accelerated(const std::string& dir, const EvalRunOptions& o, const FixedPointOptions& fp) {
  if (o.batch < 1 || o.count < 0) throw Error("batch must be >= 1 and count >= 0");
  if (fp.tolerance < 0 || fp.anderson < 0) throw Error("the early-exit tolerance and the Anderson memory must be >= 0");
  const RunDir run(dir);
  const std::string weights = run.weights(o.weights);
  LoopedTransformer model = load_model(dir, parse_device(o.device), parse_dtype(o.dtype), weights);
  model->eval();
  model->set_mixed_precision(is_mixed_precision(!o.precision.empty()   ? o.precision
                                                : run.is_training_run() ? run.spec().train.precision
                                                                        : "float32"));
  DataOptions data = run.evaluation_data();
  AcceleratedReport report{AcceleratedReport::kSchemaVersion, weights, fp.max_iters, fp.tolerance, fp.anderson, {}};
  for (const std::string& name : o.splits) {
    if (o.count) data.set_count(name, o.count);
    const Split split = load_split(data, name);
    Progress progress(name, Progress::Log::kNone);
    report.splits[name] = evaluate_accelerated(*model, split, o.batch, fp, std::ref(progress));
    progress.clear();
  }
  write_report(run.file(RunDir::kEvalAccelerated), report);
  return report;
}

AnalysisReport analyze_run(const std::string& dir, const AnalyzeRunOptions& o, std::string* text) {
  const RunDir run(dir);
  const std::string weights = run.weights(o.weights);
  const torch::Device device = parse_device(o.device);
  LoopedTransformer model = load_model(dir, device, parse_dtype(o.dtype), weights);
  if (model->config().recall == Recall::kFixed)
    throw Error(dir + ": a fixed-depth model (recall fixed) has no iteration to analyze");
  LoopedTransformer detail = load_model(dir, device, torch::kFloat64, weights);
  for (auto* m : {&model, &detail}) {
    (*m)->eval();
    for (auto& p : (*m)->parameters()) p.requires_grad_(false);
  }
  detail->set_fused_attention(false);
  analysis::AnalysisOptions s = o.analysis;
  s.training_iters = run.training_iters();
  DataOptions data = run.evaluation_data();
  AnalysisReport report{AnalysisReport::kSchemaVersion, weights, analysis::recall_spectral_radius(*model), {}};
  for (const std::string& name : o.splits) {
    data.set_count(name, o.count);
    const Split split = load_split(data, name);
    std::map<std::string, Progress> stages;  // made when a stage starts, so its rate is its own
    report.splits[name] = analysis::analyze_split(*model, *detail, split, s,
                                                  [&](const std::string& stage, int64_t done, int64_t total) {
                                                    stages.try_emplace(stage, name + " " + stage).first->second(done, total);
                                                  });
    if (text) *text += analysis::report_text(name, report.splits[name]);
  }
  write_report(run.file(RunDir::kAnalysis), report);
  return report;
}

}  // namespace looplab
