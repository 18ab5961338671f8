// Halting (eval/halting.h): each rule's stopping iteration on crafted traces, the rules' report
// worked out by hand, and the traces of a tiny model against a plain loop computing the same
// figures one example at a time.
#include <gtest/gtest.h>

#include "looplab/eval/halting.h"
#include "looplab/util/error.h"
#include "../train/tiny_model.h"

namespace looplab {
namespace {

TEST(Halting, EachRuleStopsWhereItsTraceSays) {
  const std::vector<double> rising = {0.1, 0.4, 0.5, 0.95, 0.2};
  EXPECT_EQ(stop_iteration(HaltRule::kLearned, rising, 0.5), 3);  // reaching the threshold stops
  EXPECT_EQ(stop_iteration(HaltRule::kLearned, rising, 0.9), 4);
  EXPECT_EQ(stop_iteration(HaltRule::kConfidence, rising, 0.99), 5);  // never: the most iterations
  EXPECT_EQ(stop_iteration(HaltRule::kConfidence, rising, 0.05), 1);
  const std::vector<double> steps = {1.0, 0.1, 1e-4, 5e-5, 1e-6};
  EXPECT_EQ(stop_iteration(HaltRule::kFixedPoint, steps, 1e-4), 4);  // strictly below
  EXPECT_EQ(stop_iteration(HaltRule::kFixedPoint, steps, 0.5), 2);
  EXPECT_EQ(stop_iteration(HaltRule::kFixedPoint, steps, 1e-9), 5);
  EXPECT_EQ(to_string(parse_halt_rule("fixed-point")), "fixed-point");
  try {
    parse_halt_rule("oracle");
    FAIL() << "no error";
  } catch (const OptionError& e) {
    EXPECT_EQ(e.as_flag(), "--halt 'oracle': expected learned, confidence or fixed-point");
  }
}

TEST(Halting, ReportByHand) {
  // Two examples of 4 iterations. a: confidence 0.5, 0.95, 0.97, 0.99, exact from iteration 3;
  // b: confidence 0.2, 0.3, 0.92, 0.93, exact only at iteration 4.
  HaltTrace a, b;
  a.confidence = {0.5, 0.95, 0.97, 0.99}, a.step = {1, 1e-2, 1e-5, 1e-6}, a.exact = {0, 0, 1, 1};
  b.confidence = {0.2, 0.3, 0.92, 0.93}, b.step = {1, 1, 1, 1}, b.exact = {0, 0, 0, 1};
  const HaltSplitReport r = halt_split_report({a, b}, {{HaltRule::kConfidence, 0.9}, {HaltRule::kFixedPoint, 1e-4}});
  EXPECT_EQ(r.count, 2);
  EXPECT_DOUBLE_EQ(r.exact_at_max, 1.0);
  ASSERT_EQ(r.rules.size(), 2u);
  // confidence 0.9: a stops at 2 (wrong), b at 3 (wrong): 0% exact, 2.5 iterations, at most 3.
  EXPECT_EQ(r.rules[0].rule, "confidence");
  EXPECT_DOUBLE_EQ(r.rules[0].exact, 0.0);
  EXPECT_DOUBLE_EQ(r.rules[0].mean_iters, 2.5);
  EXPECT_EQ(r.rules[0].most_iters, 3);
  // fixed-point 1e-4: a stops at 3 (right), b never (4, right): 100%, 3.5 iterations.
  EXPECT_DOUBLE_EQ(r.rules[1].exact, 1.0);
  EXPECT_DOUBLE_EQ(r.rules[1].mean_iters, 3.5);
  EXPECT_EQ(r.rules[1].most_iters, 4);
  // learned without a head's scores: refused.
  EXPECT_THROW(apply_halt_rule(HaltRule::kLearned, 0.5, {a}), Error);
}

TEST(Halting, TracesMatchAPlainLoop) {
  LoopedTransformer model = tiny_model(2, Recall::kExternal, Norm::kPost, /*halt_head=*/true);
  const torch::Tensor bits = torch::randint(0, 2, {5, 10}, torch::kInt64);
  Split split{"crafted", (bits.to(torch::kFloat32) - 0.5).unsqueeze(-1), bits.cumsum(1).remainder(2)};
  split.inputs = split.inputs.to(torch::kFloat64);
  const int64_t T = 6;
  const std::vector<HaltTrace> traces = halt_traces(*model, split, T, /*batch=*/2);
  ASSERT_EQ(traces.size(), 5u);
  torch::NoGradGuard no_grad;
  for (int64_t i = 0; i < 5; ++i) {
    const Loop loop(*model, split.inputs.slice(0, i, i + 1));
    torch::Tensor x = loop.x0();
    for (int64_t t = 1; t <= T; ++t) {
      const torch::Tensor next = loop.step(x);
      const double step = ((next - x).norm() / x.norm()).item<double>();
      const torch::Tensor p = loop.logits(next)[0].softmax(-1);  // [L, 2]
      double least = 1;
      for (int64_t l = 0; l < p.size(0); ++l) least = std::min(least, p[l].max().item<double>());
      const bool exact = (p.argmax(-1) == split.targets[i]).all().item<bool>();
      const double learned = 1 / (1 + std::exp(-model->halt_logits(next).item<double>()));
      const HaltTrace& tr = traces[static_cast<size_t>(i)];
      EXPECT_NEAR(tr.step[t - 1], step, 1e-12);
      EXPECT_NEAR(tr.confidence[t - 1], least, 1e-6);  // the softmax is taken in float32 there
      EXPECT_NEAR(tr.learned[t - 1], learned, 1e-12);
      EXPECT_EQ(tr.exact[t - 1] != 0, exact);
      x = next;
    }
  }
}

}  // namespace
}  // namespace looplab
