#include "looplab/eval/halting.h"

#include <algorithm>

#include "looplab/tasks/registry.h"
#include "looplab/util/error.h"
#include "looplab/model/relative_step.h"

namespace looplab {

std::string to_string(HaltRule r) { return halt_rule_names().at(static_cast<size_t>(r)); }

HaltRule parse_halt_rule(const std::string& name) {
  const auto& names = halt_rule_names();
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) throw OptionError("halt", one_of(names)(name));
  return static_cast<HaltRule>(it - names.begin());
}

double default_halt_threshold(HaltRule r) {
  switch (r) {
    case HaltRule::kLearned: return 0.5;
    case HaltRule::kConfidence: return 0.9;
    case HaltRule::kFixedPoint: return 1e-4;
  }
  return 0;
}

int64_t stop_iteration(HaltRule rule, const std::vector<double>& scores, double threshold) {
  for (size_t t = 0; t < scores.size(); ++t) {
    const bool stop = rule == HaltRule::kFixedPoint ? scores[t] < threshold : scores[t] >= threshold;
    if (stop) return static_cast<int64_t>(t) + 1;
  }
  return static_cast<int64_t>(scores.size());
}

const std::vector<double>& HaltTrace::scores(HaltRule r) const {
  switch (r) {
    case HaltRule::kLearned: return learned;
    case HaltRule::kConfidence: return confidence;
    case HaltRule::kFixedPoint: return step;
  }
  return step;
}

std::vector<HaltTrace> halt_traces(LoopedTransformerImpl& model, const Split& split, int64_t iters, int64_t batch,
                                   const ProgressFn& progress) {
  torch::InferenceMode inference;
  const int64_t n = split.size();
  const Decoding decoding = task(model.config().task).spec().decoding;
  const bool head = model.config().halt_head;
  std::vector<HaltTrace> traces(static_cast<size_t>(n));
  for (int64_t start = 0; start < n; start += batch) {
    const int64_t end = std::min(n, start + batch);
    const Loop loop(model, split.inputs.slice(0, start, end));
    const torch::Tensor target = split.targets.slice(0, start, end).to(model.device());
    torch::Tensor x = loop.x0();
    // Per iteration, [b] each; gathered on the CPU after the batch.
    std::vector<torch::Tensor> learned, confidence, step, exact;
    loop.run(iters, [&](int64_t, const torch::Tensor& next, const torch::Tensor& logits) {
      step.push_back(relative_step(next, x));                                                        // [b]
      x = next;
      confidence.push_back(std::get<0>(logits.to(torch::kFloat32).softmax(-1).max(-1)).amin(1));   // [b, L] -> [b]
      exact.push_back((predict(logits, decoding) == target).all(1));                                 // [b]
      if (head) learned.push_back(model.halt_logits(next).sigmoid());                                 // [b]
    }, {}, /*with_logits=*/true);
    auto rows = [](const std::vector<torch::Tensor>& per_iteration) {  // -> [b, T] float64 on the CPU
      return torch::stack(per_iteration, 1).to(torch::kCPU, torch::kFloat64).contiguous();
    };
    const torch::Tensor s = rows(step), c = rows(confidence), e = rows(exact);
    const torch::Tensor l = head ? rows(learned) : torch::Tensor();
    for (int64_t i = 0; i < end - start; ++i) {
      HaltTrace& tr = traces[static_cast<size_t>(start + i)];
      const double* ps = s[i].data_ptr<double>();
      const double* pc = c[i].data_ptr<double>();
      const double* pe = e[i].data_ptr<double>();
      tr.step.assign(ps, ps + iters);
      tr.confidence.assign(pc, pc + iters);
      tr.exact.resize(static_cast<size_t>(iters));
      for (int64_t t = 0; t < iters; ++t) tr.exact[static_cast<size_t>(t)] = pe[t] > 0.5;
      if (head) {
        const double* pl = l[i].data_ptr<double>();
        tr.learned.assign(pl, pl + iters);
      }
    }
    if (progress) progress(end, n);
  }
  return traces;
}

HaltRuleReport apply_halt_rule(HaltRule rule, double threshold, const std::vector<HaltTrace>& traces) {
  HaltRuleReport r;
  r.rule = to_string(rule);
  r.threshold = threshold;
  if (traces.empty()) return r;
  double exact = 0, iterations = 0;
  for (const HaltTrace& tr : traces) {
    const std::vector<double>& scores = tr.scores(rule);
    if (scores.empty()) throw Error("--halt learned needs a model with a halting head (train it with --halt-head)");
    const int64_t t = stop_iteration(rule, scores, threshold);
    exact += tr.exact[static_cast<size_t>(t - 1)];
    iterations += static_cast<double>(t);
    r.most_iters = std::max(r.most_iters, t);
  }
  r.exact = exact / static_cast<double>(traces.size());
  r.mean_iters = iterations / static_cast<double>(traces.size());
  return r;
}

HaltSplitReport halt_split_report(const std::vector<HaltTrace>& traces, const std::vector<std::pair<HaltRule, double>>& rules) {
  HaltSplitReport r;
  r.count = static_cast<int64_t>(traces.size());
  double at_max = 0;
  for (const HaltTrace& tr : traces) at_max += tr.exact.empty() ? 0 : tr.exact.back();
  r.exact_at_max = traces.empty() ? 0 : at_max / static_cast<double>(traces.size());
  for (const auto& [rule, threshold] : rules) r.rules.push_back(apply_halt_rule(rule, threshold, traces));
  return r;
}

}  // namespace looplab
