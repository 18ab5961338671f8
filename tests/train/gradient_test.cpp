// How the gradient is taken (--gradient, train/progressive_loss.h) against independent
// computations: phantom steps with damping 1 are BPTT through as many iterations from the same
// state; the implicit gradient at a converged fixed point equals BPTT through many iterations
// and central finite differences of the loss at the fixed point.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "../util/finite_difference.h"
#include "looplab/train/progressive_loss.h"
#include "tiny_model.h"

namespace looplab {
namespace {

struct Batch {
  torch::Tensor input, target;
};
Batch batch() {
  torch::manual_seed(5);
  const torch::Tensor bits = torch::randint(0, 2, {3, 6}, torch::kInt64);
  return {(bits.to(torch::kFloat64) - 0.5).unsqueeze(-1), bits.cumsum(1).remainder(2)};
}

// Every parameter's gradient, flattened and joined, after `backward` from zero gradients.
template <typename Backward>
torch::Tensor gradients(LoopedTransformerImpl& model, Backward&& backward) {
  for (auto& p : model.parameters()) p.mutable_grad() = torch::Tensor();
  backward();
  std::vector<torch::Tensor> parts;
  for (auto& p : model.parameters())
    parts.push_back(p.grad().defined() ? p.grad().reshape({-1}).clone() : torch::zeros({p.numel()}, torch::kFloat64));
  return torch::cat(parts);
}

double relative(const torch::Tensor& a, const torch::Tensor& b) {
  return ((a - b).norm() / b.norm()).item<double>();
}

TEST(Gradient, PhantomWithDampingOneIsBpttFromTheSameState) {
  for (const auto& [recall, norm] : {std::make_pair(Recall::kExternal, Norm::kPost), std::make_pair(Recall::kNone, Norm::kPre),
                                     std::make_pair(Recall::kInternal, Norm::kGru)}) {
    LoopedTransformer model = tiny_model(3, recall, norm);
    const Batch b = batch();
    FixedPointGradient o;
    o.max_iters = 3;
    o.batch_tolerance = 1e-300;  // never converges: exactly 3 iterations without gradient
    o.phantom_steps = 4;
    o.phantom_damping = 1;
    FixedPointStats st;
    const torch::Tensor phantom = gradients(*model, [&] { fixed_point_backward(*model, b.input, b.target, o, 0.7, &st); });
    const torch::Tensor bptt = gradients(*model, [&] { progressive_backward(*model, b.input, b.target, 3, 4, 0.7, false); });
    EXPECT_EQ(st.forward_iters, 3);
    EXPECT_FALSE(st.forward_converged);
    EXPECT_GT(bptt.norm().item<double>(), 0);
    EXPECT_LT(relative(phantom, bptt), 1e-12) << to_string(recall) << " " << to_string(norm);
    // Damping < 1 is another gradient.
    o.phantom_damping = 0.5;
    const torch::Tensor damped = gradients(*model, [&] { fixed_point_backward(*model, b.input, b.target, o, 0.7); });
    EXPECT_GT(relative(damped, bptt), 1e-3);
  }
}

TEST(Gradient, ImplicitEqualsBpttThroughManyIterationsAndFiniteDifferences) {
  LoopedTransformer model = tiny_model(3, Recall::kExternal, Norm::kPost, /*halt_head=*/false, /*shrink=*/0.5);
  const Batch b = batch();
  FixedPointGradient o;
  o.implicit = true;
  o.max_iters = 400;
  o.batch_tolerance = 1e-13;
  FixedPointStats st;
  const torch::Tensor implicit = gradients(*model, [&] { fixed_point_backward(*model, b.input, b.target, o, 1.0, &st); });
  ASSERT_TRUE(st.forward_converged) << "the premise: a contractive model reaches its fixed point";
  ASSERT_TRUE(st.adjoint_converged);
  EXPECT_LT(st.adjoint_iters, 400);
  // BPTT from x0 through 200 iterations: what it adds beyond the implicit gradient (the path
  // through the starting state and the transient) shrinks like rho^200.
  const torch::Tensor bptt = gradients(*model, [&] { progressive_backward(*model, b.input, b.target, 0, 200, 1.0, false); });
  EXPECT_LT(relative(implicit, bptt), 1e-8);
  // Central differences of the loss at the fixed point on a few parameter entries.
  auto loss_at_fixed_point = [&] {
    torch::NoGradGuard no_grad;
    const Loop loop(*model, b.input);
    torch::Tensor x = loop.x0();
    for (int i = 0; i < 400; ++i) x = loop.step(x);
    const torch::Tensor logits = loop.logits(x);
    return torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}), b.target.reshape({-1}))
        .item<double>();
  };
  int64_t offset = 0, checked = 0;
  for (auto& item : model->named_parameters()) {
    torch::Tensor p = item.value();
    const bool wanted = item.key().find("recur_blocks.0.mlp.0.weight") == 0 || item.key().find("projection.weight") == 0 ||
                        item.key().find("recur_blocks.0.attn.qkv.bias") == 0;
    if (wanted) {
      for (int64_t i : {int64_t{0}, p.numel() / 2}) {
        const double fd = testing::central_difference(p, i, 1e-6, loss_at_fixed_point);
        const double analytic = implicit[offset + i].item<double>();
        EXPECT_NEAR(analytic, fd, 1e-6 + 1e-5 * std::abs(fd)) << item.key() << "[" << i << "]";
        ++checked;
      }
    }
    offset += p.numel();
  }
  EXPECT_EQ(checked, 6);
}

}  // namespace
}  // namespace looplab
