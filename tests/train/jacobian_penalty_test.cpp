// The Jacobian penalty (train/jacobian_penalty.h) against independent computations: the dense
// ||df/dx||_F^2 of a tiny model, row by row from autograd, equals the estimate summed over the
// basis projections exactly and the mean over many Gaussian projections within its sampling
// error; the penalty's gradient equals central finite differences of the estimate.
#include <gtest/gtest.h>

#include <cmath>

#include "../util/finite_difference.h"
#include "looplab/train/jacobian_penalty.h"
#include "tiny_model.h"

namespace looplab {
namespace {

torch::Tensor one_input() {
  return torch::tensor({0.5, -0.5, 0.5, 0.5, -0.5, -0.5}, torch::kFloat64).reshape({1, 6, 1});
}

// A state two iterations in, where the penalty is taken.
torch::Tensor state_of(LoopedTransformerImpl& model, const torch::Tensor& input) {
  torch::NoGradGuard no_grad;
  const Loop loop(model, input);
  return loop.run(2);
}

// ||J||_F^2 of one example, from the L d rows of J, each a vector-Jacobian product with a basis
// vector (autograd directly, no estimate).
double dense_frobenius(LoopedTransformerImpl& model, const torch::Tensor& input, const torch::Tensor& state) {
  const Loop loop(model, input);
  const torch::Tensor x = state.detach().requires_grad_(true);
  const torch::Tensor y = loop.step(x).reshape({-1});
  double sum = 0;
  for (int64_t i = 0; i < y.numel(); ++i) {
    const torch::Tensor row = torch::autograd::grad({y[i]}, {x}, {}, /*retain_graph=*/true)[0];
    sum += row.pow(2).sum().item<double>();
  }
  return sum;
}

TEST(JacobianPenalty, EstimateMatchesTheDenseFrobeniusNorm) {
  for (const auto& [recall, norm] : {std::make_pair(Recall::kExternal, Norm::kPost), std::make_pair(Recall::kNone, Norm::kPre),
                                     std::make_pair(Recall::kInternal, Norm::kGru)}) {
    LoopedTransformer model = tiny_model(3, recall, norm);
    const torch::Tensor input = one_input();
    const torch::Tensor state = state_of(*model, input);
    const double dense = dense_frobenius(*model, input, state);
    const int64_t L = state.size(1), d = state.size(2);
    ASSERT_GT(dense, 0);
    // The L d basis projections: each estimate is one row's squared norm over L d; their sum is
    // ||J||_F^2 / (L d) exactly.
    const torch::Tensor basis = torch::eye(L * d, torch::kFloat64).reshape({L * d, L, d});
    {
      const Loop loop(*model, input.expand({L * d, L, 1}));
      const double summed = jacobian_estimate(loop, state.expand({L * d, L, d}), basis, false).sum().item<double>();
      EXPECT_NEAR(summed, dense / static_cast<double>(L * d), 1e-10 * dense) << to_string(recall) << " " << to_string(norm);
    }
    // Gaussian projections: the mean of 20,000 estimates. For v ~ N(0, I) the estimate
    // v^T A v / (L d) (A = J J^T) has variance 2 ||A||_F^2 / (L d)^2, at most 2 (||J||_F^2 / (L d))^2,
    // so the standard error of the mean is at most 1% of the value; 4% is 4 of them.
    const int64_t n = 20000;
    torch::manual_seed(11);
    const torch::Tensor v = torch::randn({n, L, d}, torch::kFloat64);
    const Loop loop(*model, input.expand({n, L, 1}));
    const torch::Tensor estimates = jacobian_estimate(loop, state.expand({n, L, d}), v, false);
    const double mean = estimates.mean().item<double>(), expected = dense / static_cast<double>(L * d);
    EXPECT_NEAR(mean, expected, 0.04 * expected) << to_string(recall) << " " << to_string(norm);
  }
}

TEST(JacobianPenalty, GradientMatchesFiniteDifferences) {
  LoopedTransformer model = tiny_model(3);
  torch::manual_seed(7);
  const torch::Tensor input = torch::cat({one_input(), -one_input()});
  const torch::Tensor state = state_of(*model, input);
  const torch::Tensor v = torch::randn(state.sizes(), torch::kFloat64);
  for (auto& p : model->parameters()) p.mutable_grad() = torch::Tensor();
  const double weight = 0.7;
  const double penalty = jacobian_backward(*model, input, state, v, weight);
  auto estimate = [&] {
    torch::NoGradGuard no_grad_for_weights;
    const Loop loop(*model, input);
    torch::AutoGradMode with_grad(true);  // the product itself needs a graph through the state
    return jacobian_estimate(loop, state, v, false).mean().item<double>();
  };
  EXPECT_NEAR(penalty, estimate(), 1e-12);
  int checked = 0;
  for (auto& item : model->named_parameters()) {
    const bool wanted = item.key() == "recur_blocks.0.mlp.0.weight" || item.key() == "projection.weight" ||
                        item.key() == "recur_blocks.0.attn.qkv.weight" || item.key() == "recur_blocks.0.Wh.weight";
    if (!wanted) continue;
    torch::Tensor p = item.value();
    ASSERT_TRUE(p.grad().defined()) << item.key();
    for (int64_t i : {int64_t{1}, p.numel() / 2}) {
      const double fd = weight * testing::central_difference(p, i, 1e-6, estimate);
      const double analytic = p.grad().reshape({-1})[i].item<double>();
      EXPECT_NEAR(analytic, fd, 1e-7 + 1e-5 * std::abs(fd)) << item.key() << "[" << i << "]";
      ++checked;
    }
  }
  EXPECT_GE(checked, 6);
}

}  // namespace
}  // namespace looplab
