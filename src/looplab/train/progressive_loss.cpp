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
      const auto r = model.recall_input(x0);
      torch::Tensor x = x0;
      for (int64_t t = 0; t < n; ++t) x = model.iterate(x, r, p);
      start = x;
    }
    start = start.clone();
  }
  const torch::Tensor x0 = model.embed(input);

  if (!recompute) {
    const auto r = model.recall_input(x0);
    torch::Tensor x = n > 0 ? start : x0;
    for (int64_t t = 0; t < k; ++t) x = model.iterate(x, r, p);
    const torch::Tensor logits = model.readout(x);
    const torch::Tensor loss = cross_entropy(logits, target);
    (loss * weight).backward();
    return {loss.item<double>(), logits.detach()};
  }

  // Recompute: keep the state before each of the k iterations, then walk back through them,
  // rebuilding one iteration's graph at a time and chaining the state gradient by hand. The
  // recall inputs Wh x0 enter every iteration as leaves whose gradients add up over the k
  // iterations; one backward pass through Wh at the end carries the sum to x0 and Wh.
  const auto r = model.recall_input(x0);
  LoopedTransformerImpl::RecallInput r_leaf;
  for (const torch::Tensor& t : r) r_leaf.push_back(t.defined() ? t.detach().requires_grad_(true) : t);
  std::vector<torch::Tensor> states;
  torch::Tensor last;
  {
    torch::NoGradGuard no_grad;
    torch::Tensor x = n > 0 ? start : x0.detach();
    for (int64_t t = 0; t < k; ++t) {
      states.push_back(x);
      x = model.iterate(x, r_leaf, p);
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
    model.iterate(xt, r_leaf, p).backward(grad);
    grad = xt.grad();
  }
  // x0 receives gradient through the recall, and as the starting state when n = 0.
  std::vector<torch::Tensor> outputs{}, grads{};
  for (size_t i = 0; i < r.size(); ++i)
    if (r[i].defined() && r_leaf[i].grad().defined()) {
      outputs.push_back(r[i]);
      grads.push_back(r_leaf[i].grad());
    }
  if (n == 0) {
    outputs.push_back(x0);
    grads.push_back(grad);
  }
  if (!outputs.empty()) torch::autograd::backward(outputs, grads);
  return {loss.item<double>(), logits.detach()};
}

}  // namespace looplab
