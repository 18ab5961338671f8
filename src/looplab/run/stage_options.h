// The options of what follows training in a run folder, one struct each with one set of
// defaults: the evaluation (`looplab eval`, a sweep file's [eval]) and the fixed-point analysis
// (`looplab analyze`, a sweep file's [analyze]); stages/stages.h runs them. No LibTorch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "looplab/eval/fixed_point_options.h"

namespace looplab {

namespace analysis {

// The analysis of one split (analysis/model_report.h).
struct AnalysisOptions {
  // max_iters (--iters, 500), and the tolerance (--tolerance, 1e-4) below which a relative step
  // counts as converged.
  FixedPointOptions convergence = {500, 1e-4};
  int64_t batch = 100;  // --batch: examples per batch in the convergence pass
  // --detail: the first `detail_count` examples (10) also get the Jacobian analyses (spectral
  // radius, input sensitivity two ways, initialization independence), in float64.
  int64_t detail_count = 10;
  int64_t arnoldi_steps = 60;  // --arnoldi-steps: the largest Krylov space for the spectral radius
  double arnoldi_tolerance = 1e-6;
  int64_t training_iters = 30;  // T: accuracy beyond it is "overthinking" (paper figure 3); the run's
  uint64_t seed = 0;            // --seed: sensitivity directions and initial noise
};

}  // namespace analysis

// `looplab eval DIR` and a sweep's [eval].
struct EvalRunOptions {
  std::vector<std::string> splits = {"val", "hard"};  // --split
  int64_t first = 1, last = 500;  // --iters FIRST:LAST (or LAST): the iterations in the report
  int64_t count = 0;              // --count: the first N examples of each split (0: all)
  int64_t batch = 500;            // --batch: examples per batch
  std::string weights = "final";  // --weights: final (the last epoch's) or best
  std::string device = "cpu";     // --device
  std::string dtype = "float32";  // --dtype
  // --precision: float32 or bf16-mixed (runtime.h); empty: the precision the run trained in
  // (float32 for a model folder without training.json).
  std::string precision;
  // The cheaper evaluation (evaluate_run_accelerated) when either is above 0: --early-exit,
  // the tolerance below which an example has converged and stops (0: off), and --anderson, the
  // Anderson memory (0: plain iteration). Each example runs at most `last` iterations.
  double tolerance = 0;
  int64_t anderson = 0;
  // Halting (eval/halting.h): --halt, the rules each example is stopped by (learned,
  // confidence, fixed-point; evaluate_run_halting); --halt-threshold, the threshold of the one
  // rule given (0: each rule's default); --scaling, the rules on the task's difficulty levels
  // (evaluate_run_scaling: every rule the model has, `count` examples per level, 0: 100).
  std::vector<std::string> halt;
  double halt_threshold = 0;
  bool scaling = false;
};

// The four evaluations `looplab eval` runs, one per call (eval_kind in stages/stages.h chooses
// it from the flags, and names both flags where two ask for different ones).
enum class EvalKind {
  kCurve,        // the accuracy curve (evaluate_run): no --early-exit, --anderson, --halt, --scaling
  kAccelerated,  // --early-exit and/or --anderson
  kHalting,      // --halt (without --scaling)
  kScaling,      // --scaling (--halt then chooses its rules)
};

// `looplab analyze DIR` and a sweep's [analyze].
struct AnalyzeRunOptions {
  std::vector<std::string> splits = {"val"};  // --split
  int64_t count = 100;                        // --count: examples per split
  analysis::AnalysisOptions analysis;         // training_iters is taken from the run
  std::string weights = "final";              // --weights
  std::string device = "cpu";                 // --device
  std::string dtype = "float32";              // --dtype of the convergence pass (the Jacobians use float64)
};

}  // namespace looplab
