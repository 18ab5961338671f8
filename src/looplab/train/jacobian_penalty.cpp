#include "looplab/train/jacobian_penalty.h"

#include "looplab/model/engine/engine.h"

namespace looplab {

torch::Tensor jacobian_estimate(const Loop& loop, const torch::Tensor& state, const torch::Tensor& v, bool create_graph) {
  const torch::Tensor x = state.detach().requires_grad_(true);  // [B, L, d]
  const torch::Tensor y = loop.step(x);                         // [B, L, d] = f(x, x0)
  // v^T J, one vector-Jacobian product per example (the examples do not mix), [B, L, d].
  const torch::Tensor vjp = torch::autograd::grad({y}, {x}, {v.to(y.scalar_type())}, /*retain_graph=*/create_graph,
                                                  /*create_graph=*/create_graph)[0];
  const double positions_times_width = static_cast<double>(x.size(1) * x.size(2));
  // Summed in float32 at least (bfloat16 under mixed precision).
  const torch::Tensor wide = vjp.scalar_type() == torch::kFloat64 ? vjp : vjp.to(torch::kFloat32);
  return wide.pow(2).sum({1, 2}) / positions_times_width;
}

double jacobian_backward(LoopedTransformerImpl& model, const torch::Tensor& input, const torch::Tensor& state,
                         const torch::Tensor& v, double weight) {
  // Neither scaled_dot_product_attention's backward nor the fused engine's (its block, and its
  // bf16-mixed Linear layers) is differentiable again: the plain formulas.
  const PlainEngine plain;
  const Loop loop(model, input);  // x0 and Wh x0 in the graph: the penalty reaches them too
  const torch::Tensor penalty = jacobian_estimate(loop, state, v, /*create_graph=*/true).mean();
  (penalty * weight).backward();
  return penalty.item<double>();
}

}  // namespace looplab
