// `looplab analyze DIR`: the fixed-point analysis of a trained model on one split, per example
// and summarized, as JSON (the command line prints it; the web lab shows it).
#pragma once

#include <nlohmann/json.hpp>

#include <functional>

#include "looplab/analysis/fixed_point.h"
#include "looplab/data/splits.h"

namespace looplab::analysis {

struct ReportSettings {
  ConvergenceSettings convergence;  // max_iters and the tolerance of "settled"
  int64_t batch = 100;              // examples per batch in the convergence pass
  // The first `detail_count` examples also get the Jacobian analyses (spectral radius, input
  // sensitivity two ways, initialization independence), in float64.
  int64_t detail_count = 10;
  int64_t arnoldi_steps = 60;
  double arnoldi_tolerance = 1e-6;
  int64_t training_iters = 30;  // T: accuracy beyond it is "overthinking" (paper figure 3)
  uint64_t seed = 0;            // sensitivity directions and initial noise
};

// `model` runs the convergence and accuracy pass (any device and dtype); `detail_model` is a
// float64 copy on the CPU or a GPU with fused attention off (twice differentiable).
// `progress(stage, done, total)` reports long work.
using ReportProgress = std::function<void(const std::string&, int64_t, int64_t)>;
nlohmann::json analyze_split(LoopedTransformerImpl& model, LoopedTransformerImpl& detail_model, const Split& split,
                             const ReportSettings& settings, const ReportProgress& progress = nullptr);

// Summary lines of one split's report, for a terminal.
std::string report_text(const std::string& split, const nlohmann::json& report);

}  // namespace looplab::analysis
