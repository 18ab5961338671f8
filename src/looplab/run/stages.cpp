#include "looplab/run/stages.h"

#include <map>

#include "looplab/eval/evaluate.h"
#include "looplab/model/model_dir.h"
#include "looplab/run/run_dir.h"
#include "looplab/runtime.h"
#include "looplab/util/error.h"
#include "looplab/util/progress.h"

namespace looplab {

EvalReport evaluate_run(const std::string& dir, const EvalRunOptions& o) {
  if (o.first < 1 || o.last < o.first) throw Error("iters: need 1 <= FIRST <= LAST");
  if (o.batch < 1 || o.count < 0) throw Error("batch must be >= 1 and count >= 0");
  const RunDir run(dir);
  const std::string weights = run.weights(o.weights);
  LoopedTransformer model = load_model(dir, parse_device(o.device), parse_dtype(o.dtype), weights);
  model->eval();
  DataOptions data = run.evaluation_data();
  EvalReport report{EvalReport::kSchemaVersion, weights, o.first, o.last, {}};
  for (const std::string& name : o.splits) {
    if (o.count) data.set_count(name, o.count);
    const Split split = load_split(data, name);
    // A line per tenth in a log: a sweep's evaluation at 500 iterations can take an hour.
    Progress progress("evaluating " + name);
    CurveReport c = evaluate_curve(*model, split, o.last, o.batch, std::ref(progress));
    progress.clear();
    const auto cut = static_cast<std::ptrdiff_t>(o.first - 1);
    for (auto* v : {&c.exact, &c.per_position, &c.relative_step, &c.unchanged}) v->erase(v->begin(), v->begin() + cut);
    c.iterations.erase(c.iterations.begin(), c.iterations.begin() + cut);
    report.splits[name] = c;
  }
  write_report(run.file(RunDir::kEval), report);
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
