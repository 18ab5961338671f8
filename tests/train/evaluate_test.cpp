// The accuracy curve against independent forward passes of fixed length.
#include "looplab/eval/evaluate.h"

#include <gtest/gtest.h>

namespace looplab {
namespace {

TEST(Evaluate, CurveMatchesSeparateForwardPasses) {
  torch::manual_seed(8);
  ModelConfig c = default_config("prefix-sums", Recall::kExternal, Norm::kPost, 16);
  c.heads = 2;
  LoopedTransformer model(c);
  DataOptions d;
  d.task = "prefix-sums";
  d.val_count = 37;
  d.train_bits = 6;
  Split split = load_split(d, "val");
  // Targets that the untrained model gets partly right: its own predictions after 3 iterations.
  {
    torch::NoGradGuard no_grad;
    split.targets = model->forward(split.inputs, 3).logits.argmax(-1);
    split.targets.index_put_({torch::indexing::Slice(0, 10), 0}, 1 - split.targets.index({torch::indexing::Slice(0, 10), 0}));
  }
  const CurveReport curve = evaluate_curve(*model, split, 6, 8);
  ASSERT_EQ(curve.exact.size(), 6u);
  EXPECT_EQ(curve.count, 37);
  EXPECT_NEAR(curve.exact[2], 27.0 / 37.0, 1e-12);
  torch::NoGradGuard no_grad;
  for (int64_t t = 1; t <= 6; ++t) {
    EXPECT_NEAR(curve.exact[t - 1], exact_accuracy(*model, split, t, 5), 1e-12) << t;
    const auto out = model->forward(split.inputs, t);
    const auto before = model->forward(split.inputs, t - 1);
    EXPECT_NEAR(curve.per_position[t - 1], (out.logits.argmax(-1) == split.targets).to(torch::kFloat64).mean().item<double>(), 1e-12);
    const double step = ((out.state - before.state).flatten(1).norm(2, 1) / before.state.flatten(1).norm(2, 1)).mean().item<double>();
    EXPECT_NEAR(curve.relative_step[t - 1], step, 1e-6);
    const double same = (out.logits.argmax(-1) == before.logits.argmax(-1)).all(1).to(torch::kFloat64).mean().item<double>();
    EXPECT_NEAR(curve.unchanged[t - 1], same, 1e-12);
  }
}

}  // namespace
}  // namespace looplab
