// `looplab analyze DIR`: the fixed-point analysis of a trained model on one split, per example
// and summarized, as the report of run/reports.h (analysis.json: the command line prints it, the web lab shows it).
#pragma once

#include <functional>

#include "looplab/analysis/fixed_point.h"
#include "looplab/data/splits.h"
#include "looplab/run/reports.h"
#include "looplab/analysis/analysis_options.h"

namespace looplab::analysis {

// `model` runs the convergence and accuracy pass (any device and dtype); `detail_model` is a
// float64 copy on the CPU or a GPU with fused attention off (twice differentiable).
// `progress(stage, done, total)` reports long work.
using ReportProgress = std::function<void(const std::string&, int64_t, int64_t)>;
AnalysisSplitReport analyze_split(LoopedTransformerImpl& model, LoopedTransformerImpl& detail_model, const Split& split,
                                  const AnalysisOptions& options, const ReportProgress& progress = nullptr);

// Summary lines of one split's report, for a terminal.
std::string report_text(const std::string& split, const AnalysisSplitReport& report);

}  // namespace looplab::analysis
