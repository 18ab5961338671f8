// The options of the fixed-point analysis: of one split (analysis/model_report.h), and of
// `looplab analyze DIR` and a sweep file's [analyze], with their defaults and their table
// (util/options.h), from which the flags, the sweep keys and the checks come. stages/stages.h
// runs them. No LibTorch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "looplab/eval/fixed_point_options.h"
#include "looplab/util/options.h"

namespace looplab {

namespace analysis {

// The analysis of one split (analysis/model_report.h).
struct AnalysisOptions {
  // max_iters (--iters, 500), and the tolerance (--tolerance, 1e-4): the relative step
  // ||x_{t+1} - x_t|| / ||x_t|| of an example below which it counts as converged.
  FixedPointOptions convergence = {500, 1e-4};
  int64_t batch = 100;  // --batch: examples per batch in the convergence pass
  // --detail: the first `detail_count` examples (10) also get the Jacobian analyses (spectral
  // radius, input sensitivity two ways, initialization independence), in float64.
  int64_t detail_count = 10;
  int64_t arnoldi_steps = 60;  // --arnoldi-steps: the largest Krylov space for the spectral radius
  double arnoldi_tolerance = 1e-6;  // --arnoldi-tolerance: Arnoldi stops once ||A y - lambda y|| < it |lambda|
  int64_t training_iters = 30;  // T: accuracy beyond it is "overthinking" (paper figure 3); the run's
  uint64_t seed = 0;            // --seed: sensitivity directions and initial noise
};

}  // namespace analysis

// `looplab analyze DIR` and a sweep's [analyze].
struct AnalyzeRunOptions {
  std::vector<std::string> splits = {"val"};  // --split
  int64_t count = 100;                        // --count: examples per split
  analysis::AnalysisOptions analysis;         // training_iters is taken from the run
  std::string weights = "final";              // --weights
  std::string device = "cpu";                 // --device
  std::string dtype = "float32";              // --dtype of the convergence pass (the Jacobians use float64)
  // --hard-size (mazes): the hard split's maze size (0: the run's, 59), e.g. 25 or 33 where a
  // model solves some mazes and fails others, to see which settle.
  int64_t hard_size = 0;
};

// The table of AnalyzeRunOptions: each flag of `looplab analyze DIR` (a sweep file's [analyze]
// takes the same keys but --device).
const OptionTable<AnalyzeRunOptions>& analyze_option_table();

// Throws OptionError naming the first option out of its range.
inline void check(const AnalyzeRunOptions& o) { check_options(analyze_option_table(), o); }

}  // namespace looplab
