// The progressive loss: recompute gives the plain backward's gradients, and the plain backward
// is the gradient of the loss with the n no-gradient iterations held constant.
#include "looplab/train/progressive_loss.h"

#include <gtest/gtest.h>

#include <tuple>

#include "../util/finite_difference.h"

namespace looplab {
namespace {

std::map<std::string, torch::Tensor> grads_of(LoopedTransformerImpl& m) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& item : m.named_parameters())
    out[item.key()] = item.value().grad().defined() ? item.value().grad().clone() : torch::zeros_like(item.value());
  return out;
}

TEST(ProgressiveLoss, RecomputeMatchesPlainBackward) {
  for (Recall recall : {Recall::kNone, Recall::kExternal, Recall::kInternal, Recall::kFixed}) {
    for (auto [n, k] : {std::pair<int64_t, int64_t>{0, 3}, {2, 3}, {4, 1}}) {
      torch::manual_seed(5);
      // GRU exercises the cell; post norm the plain residual. Fixed: 3 distinct blocks.
      ModelConfig c = default_config("prefix-sums", recall, recall == Recall::kExternal ? Norm::kPost : Norm::kGru, 16);
      c.heads = 2;
      if (recall == Recall::kFixed) c.blocks = 3;
      LoopedTransformer model(c);
      model->to(torch::kFloat64);
      const torch::Tensor input = torch::randint(0, 2, {3, 9, 1}).to(torch::kFloat64);
      const torch::Tensor target = torch::randint(0, 2, {3, 9});
      model->zero_grad();
      const LossResult plain = progressive_backward(*model, input, target, n, k, 0.7, false);
      const auto plain_grads = grads_of(*model);
      model->zero_grad();
      const LossResult recomputed = progressive_backward(*model, input, target, n, k, 0.7, true);
      const auto recomputed_grads = grads_of(*model);
      EXPECT_NEAR(plain.loss, recomputed.loss, 1e-12);
      EXPECT_TRUE(torch::allclose(plain.logits, recomputed.logits, 1e-12, 1e-12));
      for (const auto& [name, g] : plain_grads) {
        EXPECT_LT((g - recomputed_grads.at(name)).abs().max().item<double>(), 1e-10)
            << to_string(recall) << " n=" << n << " k=" << k << " " << name;
      }
      // Something actually flowed into the projection when n = 0 or recall feeds x0.
      if (n == 0 || recall == Recall::kExternal || recall == Recall::kInternal)
        EXPECT_GT(plain_grads.at("projection.weight").abs().sum().item<double>(), 0);
      else
        EXPECT_EQ(plain_grads.at("projection.weight").abs().sum().item<double>(), 0);
    }
  }
}

// A width-16 external-recall post-norm prefix-sums model in float64, with 2 inputs of 7 bits
// and random targets, all from `seed`.
std::tuple<LoopedTransformer, torch::Tensor, torch::Tensor> tiny_external_post(uint64_t seed) {
  torch::manual_seed(seed);
  ModelConfig c = default_config("prefix-sums", Recall::kExternal, Norm::kPost, 16);
  c.heads = 2;
  LoopedTransformer model(c);
  model->to(torch::kFloat64);
  const torch::Tensor input = torch::randint(0, 2, {2, 7, 1}).to(torch::kFloat64);
  return {model, input, torch::randint(0, 2, {2, 7})};
}

TEST(ProgressiveLoss, IsTheCrossEntropyAfterNPlusKIterations) {
  auto [model, input, target] = tiny_external_post(6);
  const LossResult r = progressive_backward(*model, input, target, 3, 2, 1.0, false);
  torch::NoGradGuard no_grad;
  const torch::Tensor logits = model->forward(input, 5).logits;
  // Mean over tokens of -log softmax at the target, written out.
  const torch::Tensor logp = torch::log_softmax(logits, -1).gather(-1, target.unsqueeze(-1));
  EXPECT_NEAR(r.loss, -logp.mean().item<double>(), 1e-12);
  EXPECT_TRUE(torch::allclose(r.logits, logits, 1e-12, 1e-12));
}

// The n iterations carry no gradient: the analytic gradient is the finite difference of the
// loss with x_n held at its value (only the k iterations, x0 and the recall see the change),
// and not the finite difference of the whole n + k iterations, which differs measurably.
TEST(ProgressiveLoss, TheNIterationsCarryNoGradient) {
  const auto tiny = tiny_external_post(7);  // named, so that the lambdas below can capture them (C++17)
  LoopedTransformer model = std::get<0>(tiny);
  const torch::Tensor input = std::get<1>(tiny), target = std::get<2>(tiny);
  const int64_t n = 3, k = 2;
  model->zero_grad();
  progressive_backward(*model, input, target, n, k, 1.0, false);
  torch::Tensor held;  // x_n at the unperturbed weights
  {
    torch::NoGradGuard no_grad;
    held = Loop(*model, input).run(n);
  }
  auto loss_from = [&](const torch::Tensor& start) {
    torch::NoGradGuard no_grad;
    const Loop loop(*model, input);
    const torch::Tensor x = loop.run(k, nullptr, start.defined() ? start : loop.run(n));
    const torch::Tensor logits = loop.logits(x);
    return torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}), target.reshape({-1}))
        .item<double>();
  };
  int checked = 0, differs = 0;
  for (const auto& item : model->named_parameters()) {
    if (item.key().find("recur_blocks.0.mlp.0.weight") != 0 && item.key().find("recur_blocks.0.attn.qkv.weight") != 0)
      continue;
    torch::Tensor p = item.value();
    for (int64_t i : {int64_t{0}, p.numel() / 3, p.numel() - 1}) {
      const double analytic = p.grad().reshape({-1})[i].item<double>();
      const double with_held = testing::central_difference(p, i, 1e-6, [&] { return loss_from(held); });
      const double through_all = testing::central_difference(p, i, 1e-6, [&] { return loss_from({}); });
      EXPECT_NEAR(analytic, with_held, 1e-7 + 1e-5 * std::abs(with_held)) << item.key() << "[" << i << "]";
      differs += std::abs(through_all - with_held) > 1e-4 * std::max(1e-6, std::abs(with_held));
      ++checked;
    }
  }
  EXPECT_EQ(checked, 6);
  EXPECT_GE(differs, 3) << "the n iterations hardly change the loss: the test could not tell";
}

}  // namespace
}  // namespace looplab
