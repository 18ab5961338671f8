// The options of `looplab eval DIR` and a sweep file's [eval], with their defaults and their
// table (util/options.h), from which the flags, the sweep keys and the checks come; and the
// four evaluations they choose among. stages/stages.h runs them. No LibTorch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "looplab/util/options.h"

namespace looplab {

struct EvalRunOptions {
  std::vector<std::string> splits = {"val", "hard"};  // --split: train, val, hard
  int64_t first = 1, last = 500;  // --iters FIRST:LAST (or LAST): the iterations in the report
  int64_t count = 0;              // --count: the first N examples of each split (0: all)
  int64_t batch = 500;            // --batch: examples per batch
  std::string weights = "final";  // --weights: final (the last epoch's), best or raw (run/run_folder.h)
  std::string device = "cpu";     // --device
  std::string dtype = "float32";  // --dtype
  // --precision: float32 or bf16-mixed (platform/runtime.h); empty: the precision the run trained in
  // (float32 for a model folder without training.json).
  std::string precision;
  // The cheaper evaluation (evaluate_run_accelerated) when either is above 0: --early-exit,
  // the relative step ||x_{t+1} - x_t|| / ||x_t|| below which an example has converged and
  // stops (0: off), and --anderson, the Anderson memory (0: plain iteration). Each example runs
  // at most `last` iterations.
  double early_exit = 0;
  int64_t anderson = 0;
  // Halting (eval/halting.h): --halt, the rules each example is stopped by (learned,
  // confidence, fixed-point; evaluate_run_halting); --halt-threshold, the threshold of the one
  // rule given (0: each rule's default); --scaling, the rules on the task's difficulty levels
  // (evaluate_run_scaling: every rule the model has, `count` examples per level, 0: 100).
  std::vector<std::string> halt;
  double halt_threshold = 0;
  bool scaling = false;
  // --trace N: the answer after every iteration 1..`last` of the first N examples of the one
  // split given (evaluate_run_trace; 0: off).
  int64_t trace = 0;
  // --hard-size S: mazes: the hard split's maze size for --scaling (a level beyond 59, e.g. 201)
  // and --trace (0: the run's). The other evaluations keep the run's hard split.
  int64_t hard_size = 0;
};

// The table of EvalRunOptions: each flag of `looplab eval` (the sweep file's [eval] takes the
// same keys but the ones of another evaluation than the curve, and --device).
const OptionTable<EvalRunOptions>& eval_option_table();

// The halting rules by name: "learned", "confidence", "fixed-point" (eval/halting.h).
const std::vector<std::string>& halt_rule_names();

// The five evaluations `looplab eval` runs, one per call.
enum class EvalKind {
  kCurve,        // the accuracy curve (evaluate_run): no --early-exit, --anderson, --halt, --scaling
  kAccelerated,  // --early-exit and/or --anderson
  kHalting,      // --halt (without --scaling)
  kScaling,      // --scaling (--halt then chooses its rules)
  kTrace,        // --trace: the answers of a few examples at every iteration
};
// The evaluation `o` asks for; an Error naming both flags where two ask for different ones.
EvalKind eval_kind(const EvalRunOptions& o);

// Throws OptionError naming the first bad option (its range in the table, then the checks that
// join two: --halt-threshold needs one --halt rule; eval_kind's).
void check(const EvalRunOptions& o);

}  // namespace looplab
