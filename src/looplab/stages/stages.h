// What follows training in a run folder, as `looplab eval` and `looplab analyze` run it and a
// sweep runs it for each of its runs: the accuracy curve of each split (DIR/eval.json) and the
// fixed-point analysis (DIR/analysis.json). Both write their report atomically and return it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "looplab/analysis/model_report.h"
#include "looplab/run/reports.h"
#include "looplab/analysis/analysis_options.h"
#include "looplab/eval/eval_options.h"

namespace looplab {

// Each throws looplab::Error naming the option of a value out of range (before any work).

// The accuracy curve of each split at iterations o.first..o.last (DIR/eval.json); a stopped
// evaluation goes on from its last batch (DIR/eval.partial.json).
EvalReport evaluate_run(const std::string& dir, const EvalRunOptions& o);

// The cheaper evaluation of eval/accelerated.h (`looplab eval --early-exit/--anderson`): each
// example stops at its convergence (o.early_exit), at most o.last iterations, with Anderson
// acceleration of memory o.anderson. Writes DIR/eval_accelerated.json.
AcceleratedReport evaluate_run_accelerated(const std::string& dir, const EvalRunOptions& o);

// Halting (eval/halting.h): every split run o.last iterations, each example stopped by each
// rule of o.halt. Writes DIR/eval_halt.json.
HaltReport evaluate_run_halting(const std::string& dir, const EvalRunOptions& o);
// Test-time compute against difficulty: the task's difficulty levels (Task::difficulty_levels,
// o.count examples each, 0: 100), each run o.last iterations and stopped by every rule the
// model has (learned only with a halting head; o.halt, when given, chooses). Writes
// DIR/eval_scaling.json.
ScalingReport evaluate_run_scaling(const std::string& dir, const EvalRunOptions& o);

// `looplab eval --trace N`: the answer after every iteration 1..o.last of the first N examples of
// the one split o.splits names, with their inputs and targets. Writes DIR/eval_trace.json.
TraceReport evaluate_run_trace(const std::string& dir, const EvalRunOptions& o);

// `looplab eval`: the evaluation o asks for (eval_kind, eval/eval_options.h), run and written; returns its report as JSON (`json`) or its table and the file
// written, as the command prints it.
std::string run_evaluation(const std::string& dir, const EvalRunOptions& o, bool json);

// `text` (optional) receives the summary lines: the recall matrices' spectral radii, then each
// split's.
AnalysisReport analyze_run(const std::string& dir, const AnalyzeRunOptions& o, std::string* text = nullptr);

// `looplab forward`: the model folder run `iters` iterations on the tensor "input" [batch,
// positions, C_in] of the safetensors file `input`, in `dtype` on `device`; writes "logits" and
// "state" to the safetensors file `output` and returns the line saying so.
struct ForwardOptions {
  std::string input, output;      // --input, --output
  int64_t iters = 30;             // --iters
  std::string device = "cpu";     // --device
  std::string dtype = "float32";  // --dtype
};
std::string forward_file(const std::string& dir, const ForwardOptions& o);

// `looplab solve`: DIR's model (`weights`, on `device`) answers one query of `task` (whose solve
// option was given; a model of another task is an Error) in `iters` iterations: the task's
// printout of the answer and when it stopped changing.
std::string solve_run(const std::string& dir, const std::string& task, const std::string& query, int64_t iters,
                      const std::string& weights, const std::string& device);

}  // namespace looplab
