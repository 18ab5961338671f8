// What follows training in a run folder, as `looplab eval` and `looplab analyze` run it and a
// sweep runs it for each of its runs: the accuracy curve of each split (DIR/eval.json) and the
// fixed-point analysis (DIR/analysis.json). Both write their report atomically and return it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "looplab/analysis/model_report.h"
#include "looplab/run/reports.h"
#include "looplab/run/stage_options.h"

namespace looplab {

EvalReport evaluate_run(const std::string& dir, const EvalRunOptions& o);

// The cheaper evaluation of eval/accelerated.h (`looplab eval --early-exit/--anderson`): each
// example stops at its convergence (fp.tolerance), at most fp.max_iters iterations, with
// Anderson acceleration of memory fp.anderson; o's splits, count, batch, weights, device, dtype
// and precision. Writes DIR/eval_accelerated.json.
AcceleratedReport evaluate_run_accelerated(const std::string& dir, const EvalRunOptions& o, const FixedPointOptions& fp);

// `text` (optional) receives the summary lines of each split.
AnalysisReport analyze_run(const std::string& dir, const AnalyzeRunOptions& o, std::string* text = nullptr);

}  // namespace looplab
