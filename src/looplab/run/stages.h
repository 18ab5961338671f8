// What follows training in a run folder, as `looplab eval` and `looplab analyze` run it and a
// sweep runs it for each of its runs: the accuracy curve of each split (DIR/eval.json) and the
// fixed-point analysis (DIR/analysis.json). Both write their report atomically and return it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "looplab/analysis/model_report.h"
#include "looplab/run/reports.h"

namespace looplab {

struct EvalRunOptions {
  std::vector<std::string> splits = {"val", "hard"};
  int64_t first = 1, last = 500;  // the iterations kept in the report
  int64_t count = 0;              // the first N examples of each split (0: all)
  int64_t batch = 500;
  std::string weights = "final", device = "cpu", dtype = "float32";
  // float32 or bf16-mixed (runtime.h); empty: the precision the run trained in (float32 for a
  // model folder without training.json).
  std::string precision;
};
EvalReport evaluate_run(const std::string& dir, const EvalRunOptions& o);

struct AnalyzeRunOptions {
  std::vector<std::string> splits = {"val"};
  int64_t count = 100;  // examples per split
  analysis::AnalysisOptions analysis;  // training_iters is taken from the run
  std::string weights = "final", device = "cpu", dtype = "float32";
};
// `text` (optional) receives the summary lines of each split.
AnalysisReport analyze_run(const std::string& dir, const AnalyzeRunOptions& o, std::string* text = nullptr);

}  // namespace looplab
