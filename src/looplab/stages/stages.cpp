#include "looplab/stages/stages.h"

#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "looplab/eval/accelerated.h"
#include "looplab/eval/evaluate.h"
#include "looplab/eval/halting.h"
#include "looplab/io/atomic_file.h"
#include "looplab/io/json_file.h"
#include "looplab/io/json_reader.h"
#include "looplab/io/tensor_io.h"
#include "looplab/run/model_folder.h"
#include "looplab/run/run_folder.h"
#include "looplab/platform/runtime.h"
#include "looplab/tasks/registry.h"
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
  using namespace json_reader;
  try {
    const nlohmann::json j = parse_json(read_file(file), file);
    // Version 2 named the positions right "positions_right" (1: "positions").
    const int version = read_typed<int>(j, file, [](const nlohmann::json& j) { return read_schema_version(j, 2); });
    if (!j.contains("settings") || j.at("settings") != settings) {
      std::fprintf(stderr, "%s: left by an evaluation with other weights or settings; starting over\n", file.c_str());
      return {};
    }
    return read_typed<std::map<std::string, CurveSums>>(j, file, [version](const nlohmann::json& j) {
      std::map<std::string, CurveSums> sums;
      get_object(j, "splits", [&](const nlohmann::json& splits) {
        for (const auto& [name, v] : splits.items())
          nested(name, [&, &v = v] {
            CurveSums& c = sums[name];
            need_object(v);
            get(v, "done", c.done);
            get(v, "exact", c.exact);
            get(v, version < 2 ? "positions" : "positions_right", c.positions_right);
            get(v, "step", c.step);
            get(v, "unchanged", c.unchanged);
          });
      });
      return sums;
    });
  } catch (const Error& e) {  // "FILE: why"
    std::string why = e.what();
    if (why.rfind(file + ": ", 0) == 0) why = why.substr(file.size() + 2);
    std::fprintf(stderr, "%s: unreadable (%s); starting the evaluation over\n", file.c_str(), why.c_str());
    return {};
  }
}

void write_partial(const std::string& file, const nlohmann::json& settings, const std::map<std::string, CurveSums>& sums) {
  nlohmann::json splits = nlohmann::json::object();
  for (const auto& [name, s] : sums)
    splits[name] = {{"done", s.done}, {"exact", s.exact}, {"positions_right", s.positions_right}, {"step", s.step},
                    {"unchanged", s.unchanged}};
  write_file_atomic(file, nlohmann::json{{"schema_version", 2}, {"settings", settings}, {"splits", splits}}.dump() + "\n");
}

// The rules of o.halt with their thresholds; none given: every rule the model has.
std::vector<std::pair<HaltRule, double>> halt_rules(const EvalRunOptions& o, const ModelConfig& c) {
  std::vector<std::pair<HaltRule, double>> rules;
  if (o.halt.empty()) {
    for (const std::string& name : halt_rule_names())
      if (name != "learned" || c.halt_head) rules.emplace_back(parse_halt_rule(name), default_halt_threshold(parse_halt_rule(name)));
    return rules;
  }
  for (const std::string& name : o.halt) {
    const HaltRule r = parse_halt_rule(name);
    if (r == HaltRule::kLearned && !c.halt_head)
      throw Error("--halt learned needs a model with a halting head (train it with --halt-head)");
    rules.emplace_back(r, o.halt_threshold > 0 ? o.halt_threshold : default_halt_threshold(r));
  }
  return rules;
}

// The run's model as an evaluation runs it: the chosen weights, device and dtype, in eval mode,
// in the precision asked for or else the run's training precision (float32 for a model folder
// without training.json). `o.precision` is settled in place.
LoopedTransformer load_for_evaluation(const RunFolder& run, EvalRunOptions& o) {
  LoopedTransformer model = load_model(run.path(), parse_device(o.device), parse_dtype(o.dtype), run.weights(o.weights));
  model->eval();
  if (o.precision.empty()) o.precision = run.is_training_run() ? run.spec().train.precision : "float32";
  model->set_mixed_precision(is_mixed_precision(o.precision));
  return model;
}

// The run's data with the hard split's maze size set to `hard_size` (0: left as the run's);
// throws for a task without a maze size.
DataOptions with_hard_size(DataOptions d, const ModelConfig& model, int64_t hard_size) {
  if (hard_size <= 0) return d;
  if (!task(model.task).spec().any_square_side) throw Error("--hard-size: the task " + model.task + " has no maze size");
  d.hard_size = hard_size, d.hard_file.clear();
  return d;
}

// What every evaluation of a run folder starts from: the checked options, the folder, the name of
// the weights file it evaluates, the options with the precision settled, and the model.
struct Evaluation {
  Evaluation(const std::string& dir, const EvalRunOptions& o)
      : run((check(o), dir)), weights(run.weights(o.weights)), settled(o), model(load_for_evaluation(run, settled)) {}
  const RunFolder run;
  const std::string weights;
  EvalRunOptions settled;
  LoopedTransformer model;
  // The run's evaluation data, the hard maze size as --hard-size gives it.
  DataOptions data() const { return with_hard_size(run.evaluation_data(), model->config(), settled.hard_size); }
};

}  // namespace

EvalReport evaluate_run(const std::string& dir, const EvalRunOptions& o) {
  Evaluation e(dir, o);
  DataOptions data = e.run.evaluation_data();
  EvalReport report{EvalReport::kSchemaVersion, e.weights, o.first, o.last, {}};
  // A stopped evaluation goes on from its last batch: a sweep's evaluation at 500 iterations
  // can take an hour, the paper preset's on its hard split days.
  const std::string partial = e.run.file(RunFolder::kEvalPartial);
  const nlohmann::json settings = partial_settings(e.run.file(e.weights), e.settled);
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
    CurveReport c = evaluate_curve(*e.model, split, o.last, o.batch, so_far,
                                   [&](const CurveSums&) { write_partial(partial, settings, sums); }, std::ref(progress));
    progress.clear();
    const auto cut = static_cast<std::ptrdiff_t>(o.first - 1);
    for (auto* v : {&c.exact, &c.per_position, &c.relative_step, &c.unchanged}) v->erase(v->begin(), v->begin() + cut);
    c.iterations.erase(c.iterations.begin(), c.iterations.begin() + cut);
    report.splits[name] = c;
  }
  write_report(e.run.file(RunFolder::kEval), report);
  fs::remove(partial);
  return report;
}

HaltReport evaluate_run_halting(const std::string& dir, const EvalRunOptions& o) {
  Evaluation e(dir, o);
  const auto rules = halt_rules(o, e.model->config());
  DataOptions data = e.run.evaluation_data();
  HaltReport report;
  report.weights = e.weights;
  report.max_iters = o.last;
  for (const std::string& name : o.splits) {
    if (o.count) data.set_count(name, o.count);
    const Split split = load_split(data, name);
    Progress progress("halting on " + name, Progress::Log::kNone);
    report.splits[name] = halt_split_report(halt_traces(*e.model, split, o.last, o.batch, std::ref(progress)), rules);
    progress.clear();
  }
  write_report(e.run.file(RunFolder::kEvalHalt), report);
  return report;
}

ScalingReport evaluate_run_scaling(const std::string& dir, const EvalRunOptions& o) {
  Evaluation e(dir, o);
  const auto rules = halt_rules(o, e.model->config());
  const Task& t = task(e.model->config().task);
  const Difficulty difficulty = t.difficulty_levels(e.data(), o.count > 0 ? o.count : 100);
  if (difficulty.levels.empty()) throw Error("--scaling: the task " + t.name() + " has no difficulty levels yet");
  ScalingReport report;
  report.weights = e.weights;
  report.max_iters = o.last;
  report.measure = difficulty.measure;
  for (const Level& level : difficulty.levels) {
    const Split split = to_split(level.label, level.examples);
    Progress progress("scaling: " + level.label, Progress::Log::kNone);
    report.levels.push_back({level.label, level.size, level.difficulty,
                             halt_split_report(halt_traces(*e.model, split, o.last, o.batch, std::ref(progress)), rules)});
    progress.clear();
  }
  write_report(e.run.file(RunFolder::kEvalScaling), report);
  return report;
}

TraceReport evaluate_run_trace(const std::string& dir, const EvalRunOptions& o) {
  Evaluation e(dir, o);
  DataOptions data = e.data();
  const std::string& name = o.splits.at(0);
  data.set_count(name, o.trace);
  const Split split = load_split(data, name);
  TraceReport report;
  report.weights = e.weights;
  report.task = e.model->config().task;
  report.split = name;
  report.grid = grid_for(e.model->config(), split.inputs.size(1));
  report.channels = split.inputs.size(2);
  report.max_iters = o.last;
  auto to_text = [](const std::vector<int64_t>& classes) {
    std::string s(classes.size(), '0');
    for (size_t p = 0; p < classes.size(); ++p) s[p] = trace_char(classes[p]);
    return s;
  };
  Progress progress("tracing " + name, Progress::Log::kNone);
  const int64_t n = split.size();
  for (int64_t i = 0; i < n; ++i) {
    TraceExample x;
    x.index = i;
    const torch::Tensor input = split.inputs[i].to(torch::kFloat64).contiguous();
    x.input.assign(input.data_ptr<double>(), input.data_ptr<double>() + input.numel());
    const torch::Tensor target = split.targets[i].to(torch::kInt64).contiguous();
    x.target = to_text(std::vector<int64_t>(target.data_ptr<int64_t>(), target.data_ptr<int64_t>() + target.numel()));
    const PredictionTrace trace = trace_prediction(*e.model, split.inputs[i], o.last);
    for (size_t t = 0; t < trace.predictions.size(); ++t)
      if (t == 0 || trace.predictions[t] != trace.predictions[t - 1])
        x.answers.push_back({static_cast<int64_t>(t) + 1, to_text(trace.predictions[t])});
    report.examples.push_back(std::move(x));
    progress(i + 1, n);
  }
  progress.clear();
  write_report(e.run.file(RunFolder::kEvalTrace), report);
  return report;
}

std::string run_evaluation(const std::string& dir, const EvalRunOptions& o, bool json) {
  const RunFolder run(dir);
  auto shown = [&](const auto& report, const std::string& table, const char* file) {
    return json ? nlohmann::json(report).dump(2) + "\n" : table + "wrote " + run.file(file) + "\n";
  };
  switch (eval_kind(o)) {
    case EvalKind::kTrace: {
      const TraceReport r = evaluate_run_trace(dir, o);
      std::string text;
      for (const TraceExample& x : r.examples) {
        const std::string& last = x.answers.back().answer;
        int64_t right = 0;
        for (size_t p = 0; p < last.size(); ++p) right += last[p] == x.target[p];
        text += r.split + " example " + std::to_string(x.index) + ": " + std::to_string(x.answers.size()) +
                " changes of answer, the last after iteration " + std::to_string(x.answers.back().iteration) + "; " +
                std::to_string(right) + " of " + std::to_string(last.size()) + " positions right after " +
                std::to_string(r.max_iters) + (right == static_cast<int64_t>(last.size()) ? " (exact)\n" : "\n");
      }
      return shown(r, text, RunFolder::kEvalTrace);
    }
    case EvalKind::kScaling: {
      const ScalingReport r = evaluate_run_scaling(dir, o);
      return shown(r, to_text(r), RunFolder::kEvalScaling);
    }
    case EvalKind::kHalting: {
      const HaltReport r = evaluate_run_halting(dir, o);
      return shown(r, to_text(r, o.splits), RunFolder::kEvalHalt);
    }
    case EvalKind::kAccelerated: {
      const AcceleratedReport r = evaluate_run_accelerated(dir, o);
      return shown(r, to_text(r, o.splits), RunFolder::kEvalAccelerated);
    }
    case EvalKind::kCurve: break;
  }
  const EvalReport r = evaluate_run(dir, o);
  return shown(r, to_text(r, o.splits), RunFolder::kEval);
}

AcceleratedReport evaluate_run_accelerated(const std::string& dir, const EvalRunOptions& o) {
  Evaluation e(dir, o);
  FixedPointOptions fp;
  fp.max_iters = o.last;
  fp.tolerance = o.early_exit;
  fp.anderson = o.anderson;
  DataOptions data = e.run.evaluation_data();
  AcceleratedReport report{AcceleratedReport::kSchemaVersion, e.weights, fp.max_iters, fp.tolerance, fp.anderson, {}};
  for (const std::string& name : o.splits) {
    if (o.count) data.set_count(name, o.count);
    const Split split = load_split(data, name);
    Progress progress(name, Progress::Log::kNone);
    report.splits[name] = evaluate_accelerated(*e.model, split, o.batch, fp, std::ref(progress));
    progress.clear();
  }
  write_report(e.run.file(RunFolder::kEvalAccelerated), report);
  return report;
}

AnalysisReport analyze_run(const std::string& dir, const AnalyzeRunOptions& o, std::string* text) {
  check(o);
  const RunFolder run(dir);
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
  analysis::AnalysisOptions s = o.analysis;
  s.training_iters = run.training_iters();
  DataOptions data = with_hard_size(run.evaluation_data(), model->config(), o.hard_size);
  AnalysisReport report{AnalysisReport::kSchemaVersion, weights, analysis::recall_spectral_radius(*model), {}, {}};
  if (o.hard_size > 0) {
    report.hard_size = o.hard_size;
    if (text) *text += "hard: mazes of size " + std::to_string(o.hard_size) + "\n";
  }
  if (text && report.recall_spectral_radius.empty()) *text += "recall: none (autonomous model)\n";
  for (size_t b = 0; text && b < report.recall_spectral_radius.size(); ++b) {
    char line[96];
    std::snprintf(line, sizeof line, "recall matrix of block %zu: rho(Wx) = %.4f\n", b, report.recall_spectral_radius[b]);
    *text += line;
  }
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
  write_report(run.file(RunFolder::kAnalysis), report);
  return report;
}

std::string forward_file(const std::string& dir, const ForwardOptions& o) {
  if (o.iters < 0) throw Error("--iters must be >= 0");
  const torch::Device device = parse_device(o.device);
  const torch::Dtype dtype = parse_dtype(o.dtype);
  LoopedTransformer model = load_model(dir, device, dtype);
  const auto tensors = read_tensors(o.input);
  auto it = tensors.find("input");
  if (it == tensors.end()) {
    std::string names;
    for (const auto& [n, t] : tensors) names += (names.empty() ? "" : ", ") + n;
    throw Error(o.input + ": no tensor named 'input' (found: " + (names.empty() ? "none" : names) + ")");
  }
  if (!it->second.is_floating_point()) throw Error(o.input + ": tensor 'input' is not floating point");
  model->eval();
  torch::InferenceMode inference;
  auto out = model->forward(it->second, o.iters);
  write_tensors(o.output, {{"logits", out.logits}, {"state", out.state}});
  std::ostringstream line;
  line << "wrote " << o.output << ": logits " << out.logits.sizes() << ", state " << out.state.sizes() << " after "
       << o.iters << " iteration(s) on " << device << " in " << dtype_name(dtype) << "\n";
  return line.str();
}

std::string solve_run(const std::string& dir, const std::string& task, const std::string& query, int64_t iters,
                      const std::string& weights, const std::string& device) {
  if (iters < 1) throw Error("--iters must be >= 1");
  LoopedTransformer model = load_model(dir, parse_device(device), torch::kFloat32, RunFolder(dir).weights(weights));
  const std::string& have = model->config().task;
  if (have != task)
    throw Error(dir + ": a " + have + " model; --" + looplab::task(task).solve_option().name + " needs a " + task + " model");
  model->eval();
  return solve_query(*model, query, iters);
}

}  // namespace looplab
