// The accuracy curve against independent forward passes of fixed length.
#include "looplab/eval/evaluate.h"

#include <gtest/gtest.h>

#include "looplab/model/engine/engine.h"
#include "looplab/eval/readout.h"
#include "looplab/tasks/registry.h"

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

// The fused readout (eval/readout.h) against the plain one (a PlainEngine scope keeps
// every iteration and the readout on LibTorch's formulas): the same counts at every iteration,
// the same relative steps to float rounding. Prefix sums over two tiles of rows (300 positions)
// with argmax; chess with its top-two decoding. Targets are the model's own answers after a few
// iterations, a part of them flipped, so that every count moves.
TEST(Evaluate, FusedReadoutEqualsThePlainOne) {
  for (const char* name : {"prefix-sums", "chess"}) {
    torch::manual_seed(11);
    const bool chess = std::string(name) == "chess";
    ModelConfig c = default_config(name, Recall::kExternal, Norm::kPost, 32);
    c.heads = 4;
    LoopedTransformer model(c);
    const int64_t positions = chess ? 64 : 300;
    Split split = to_split("val", task(name).synthetic(13, positions, 5));
    {
      torch::NoGradGuard no_grad;
      split.targets = predict(model->forward(split.inputs, 4).logits, *model);
      // Five examples' targets moved by one position: wrong where the answer changes along them.
      const auto first = torch::indexing::Slice(0, 5);
      split.targets.index_put_({first}, split.targets.index({first}).roll(1, 1));
    }
    {
      torch::InferenceMode inference;
      const Loop loop(*model, split.inputs);
      ASSERT_TRUE(fused_readout_applies(*model, loop.x0())) << name;
    }
    const CurveReport fused = evaluate_curve(*model, split, 9, 6);
    CurveReport plain;
    {
      PlainEngine scope;
      plain = evaluate_curve(*model, split, 9, 6);
    }
    for (size_t t = 0; t < 9; ++t) {
      EXPECT_EQ(fused.exact[t], plain.exact[t]) << name << " iteration " << t + 1;
      EXPECT_EQ(fused.per_position[t], plain.per_position[t]) << name << " iteration " << t + 1;
      EXPECT_EQ(fused.unchanged[t], plain.unchanged[t]) << name << " iteration " << t + 1;
      EXPECT_NEAR(fused.relative_step[t], plain.relative_step[t], 1e-6 * plain.relative_step[t]) << name << " " << t + 1;
    }
    EXPECT_GT(plain.exact[3], 0.0) << name;
    EXPECT_LT(plain.exact[3], 1.0) << name;
  }
}

}  // namespace
}  // namespace looplab
