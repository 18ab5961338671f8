// The halting head's loss (train/halt_loss.h): its gradient against central finite differences
// of the binary cross-entropy computed by hand, the model's own weights untouched by it, and a
// model without a head refused.
#include <gtest/gtest.h>

#include <cmath>

#include "../util/finite_difference.h"
#include "looplab/train/halt_loss.h"
#include "looplab/util/error.h"
#include "tiny_model.h"

namespace looplab {
namespace {

// Binary cross-entropy of the head written out: mean of -(y log s(q) + (1 - y) log(1 - s(q))),
// q = w . mean_L(state) + b.
double bce_by_hand(LoopedTransformerImpl& model, const torch::Tensor& state, const std::vector<int>& right) {
  torch::NoGradGuard no_grad;
  const torch::Tensor w = model.halt->weight.reshape({-1}), b = model.halt->bias;
  double sum = 0;
  for (int64_t i = 0; i < state.size(0); ++i) {
    const double q = (state[i].mean(0) * w).sum().item<double>() + b.item<double>();
    const double s = 1 / (1 + std::exp(-q));
    sum += -(right[i] ? std::log(s) : std::log(1 - s));
  }
  return sum / static_cast<double>(state.size(0));
}

TEST(HaltLoss, GradientMatchesFiniteDifferences) {
  LoopedTransformer model = tiny_model(4, Recall::kExternal, Norm::kPost, /*halt_head=*/true);
  EXPECT_EQ(parameter_count(model->config()), [&] {
    int64_t n = 0;
    for (const auto& p : model->parameters()) n += p.numel();
    return n;
  }());
  torch::manual_seed(9);
  const torch::Tensor state = torch::randn({4, 6, 8}, torch::kFloat64).requires_grad_(true);
  const std::vector<int> right = {1, 0, 0, 1};
  const torch::Tensor right_tensor = torch::tensor({true, false, false, true});
  for (auto& p : model->parameters()) p.mutable_grad() = torch::Tensor();
  const double weight = 0.6;
  const HaltLoss h = halt_backward(*model, state, right_tensor, weight);
  EXPECT_NEAR(h.loss, bce_by_hand(*model, state, right), 1e-12);
  // Only the head learns: the state was read detached, the blocks get nothing.
  EXPECT_FALSE(state.grad().defined());
  for (const auto& item : model->named_parameters())
    if (item.key().rfind("halt.", 0) != 0) EXPECT_FALSE(item.value().grad().defined()) << item.key();
  int checked = 0;
  for (torch::Tensor p : {model->halt->weight, model->halt->bias}) {
    for (int64_t i : {int64_t{0}, p.numel() - 1}) {
      const double fd = testing::central_difference(p, i, 1e-6, [&] { return bce_by_hand(*model, state, right); });
      EXPECT_NEAR(p.grad().reshape({-1})[i].item<double>(), weight * fd, 1e-8);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 4);
  // The accuracy: the logit's sign against the answer, counted by hand.
  torch::NoGradGuard no_grad;
  const torch::Tensor q = model->halt_logits(state);
  int agree = 0;
  for (int i = 0; i < 4; ++i) agree += (q[i].item<double>() > 0) == (right[i] == 1);
  EXPECT_DOUBLE_EQ(h.accuracy, agree / 4.0);
}

TEST(HaltLoss, AModelWithoutAHeadIsRefused) {
  LoopedTransformer model = tiny_model(4);
  EXPECT_THROW(halt_backward(*model, torch::zeros({1, 6, 8}, torch::kFloat64), torch::tensor({true}), 1.0), Error);
}

}  // namespace
}  // namespace looplab
