// Halting: when each example stops iterating (`looplab eval DIR --halt RULE`, issue 35 point 3),
// and how its answer and the iterations it spent depend on the rule:
//   learned      the halting head's probability that the answer is exactly right
//                (ModelConfig::halt_head) reaches the threshold (default 0.5);
//   confidence   the least confident position's top class probability reaches it (0.9);
//   fixed-point  the relative step ||x_t - x_{t-1}|| / ||x_{t-1}|| falls below it (1e-4:
//                `--early-exit` of eval/accelerated.h, the same stop).
// An example none stops runs the most iterations. Every rule is read off one pass that records,
// per example and iteration, what each rule looks at and whether the answer is exact.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "looplab/data/splits.h"
#include "looplab/eval/eval_options.h"  // halt_rule_names
#include "looplab/eval/evaluate.h"
#include "looplab/model/looped_transformer.h"
#include "looplab/run/reports.h"

namespace looplab {

enum class HaltRule { kLearned, kConfidence, kFixedPoint };
std::string to_string(HaltRule r);
// Throws OptionError("halt", ...) listing the names.
HaltRule parse_halt_rule(const std::string& name);
double default_halt_threshold(HaltRule r);

// The iteration t (1-based) at which an example stops, from its scores after iterations
// 1..T: the first with score >= threshold (learned, confidence) or score < threshold
// (fixed-point); T when there is none.
int64_t stop_iteration(HaltRule rule, const std::vector<double>& scores, double threshold);

// One example's record, per iteration t = 1..T (index t - 1).
struct HaltTrace {
  std::vector<double> learned;     // sigmoid of the halting head's logit (empty without a head)
  std::vector<double> confidence;  // the least confident position's top class probability
  std::vector<double> step;        // the relative step from x_{t-1} (x_0 = x0) to x_t
  std::vector<uint8_t> exact;      // the answer after t exactly right
  const std::vector<double>& scores(HaltRule r) const;
};
std::vector<HaltTrace> halt_traces(LoopedTransformerImpl& model, const Split& split, int64_t iters, int64_t batch,
                                   const ProgressFn& progress = nullptr);

// The rule on the traces: exact accuracy at each example's stop, and the iterations spent.
HaltRuleReport apply_halt_rule(HaltRule rule, double threshold, const std::vector<HaltTrace>& traces);
// Every rule of `rules` (with its threshold) on one split's traces.
HaltSplitReport halt_split_report(const std::vector<HaltTrace>& traces, const std::vector<std::pair<HaltRule, double>>& rules);

}  // namespace looplab
