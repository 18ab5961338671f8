#include "looplab/train/progressive_loss.h"

namespace looplab {

namespace {

torch::Tensor cross_entropy(const torch::Tensor& logits, const torch::Tensor& target) {
  return torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}), target.reshape({-1}));
}

}  // namespace

LossResult progressive_backward(LoopedTransformerImpl& model, const torch::Tensor& input, const torch::Tensor& target,
                                int64_t n, int64_t k, double weight, bool recompute) {
  const Positions p = model.positions(model.grid_for(input.size(1)));

  // The n iterations: no graph at all. Their output is cloned outside inference mode so that
  // autograd may use it (it stays a constant: no gradient flows into these iterations).
  torch::Tensor start;
  if (n > 0) {
    {
      torch::InferenceMode inference;
      const torch::Tensor x0 = model.embed(input);
      torch::Tensor x = x0;
      for (int64_t t = 0; t < n; ++t) x = model.iterate(x, x0, p);
      start = x;
    }
    start = start.clone();
  }
  const torch::Tensor x0 = model.embed(input);

  if (!recompute) {
    torch::Tensor x = n > 0 ? start : x0;
    for (int64_t t = 0; t < k; ++t) x = model.iterate(x, x0, p);
    const torch::Tensor logits = model.readout(x);
    const torch::Tensor loss = cross_entropy(logits, target);
    (loss * weight).backward();
    return {loss.item<double>(), logits.detach()};
  }

  // Recompute: keep the state before each of the k iterations, then walk back through them,
  // rebuilding one iteration's graph at a time and chaining the state gradient by hand.
  const torch::Tensor x0_leaf = x0.detach().requires_grad_(true);
  std::vector<torch::Tensor> states;
  torch::Tensor last;
  {
    torch::NoGradGuard no_grad;
    torch::Tensor x = n > 0 ? start : x0.detach();
    for (int64_t t = 0; t < k; ++t) {
      states.push_back(x);
      x = model.iterate(x, x0_leaf, p);
    }
    last = x;
  }
  const torch::Tensor xk = last.detach().requires_grad_(true);
  const torch::Tensor logits = model.readout(xk);
  const torch::Tensor loss = cross_entropy(logits, target);
  (loss * weight).backward();
  torch::Tensor grad = xk.grad();
  for (int64_t t = k - 1; t >= 0; --t) {
    const torch::Tensor xt = states[t].detach().requires_grad_(true);
    model.iterate(xt, x0_leaf, p).backward(grad);
    grad = xt.grad();
  }
  // x0 receives gradient through the recall in every iteration, and as the starting state
  // when n = 0.
  torch::Tensor grad_x0 = x0_leaf.grad();
  if (n == 0) grad_x0 = grad_x0.defined() ? grad_x0 + grad : grad;
  if (grad_x0.defined()) x0.backward(grad_x0);
  return {loss.item<double>(), logits.detach()};
}

}  // namespace looplab
