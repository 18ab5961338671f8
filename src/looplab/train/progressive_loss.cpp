#include "looplab/train/progressive_loss.h"
#include "looplab/model/relative_step.h"

namespace looplab {

namespace {

torch::Tensor cross_entropy(const torch::Tensor& logits, const torch::Tensor& target) {
  return torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}), target.reshape({-1}));
}

}  // namespace

LossResult progressive_backward(LoopedTransformerImpl& model, const torch::Tensor& input, const torch::Tensor& target,
                                int64_t n, int64_t k, double weight, bool recompute) {
  // x0 and Wh x0 once, in the graph: gradient reaches the projection and Wh through them.
  const Loop loop(model, input);

  // The n iterations: no graph at all. Their output is cloned outside inference mode so that
  // autograd may use it (it stays a constant: no gradient flows into these iterations).
  torch::Tensor start;
  if (n > 0) {
    {
      torch::InferenceMode inference;
      start = loop.run(n);
    }
    start = start.clone();
  }

  if (!recompute) {
    const torch::Tensor x = loop.run(k, nullptr, start);
    const torch::Tensor logits = loop.logits(x);
    const torch::Tensor loss = cross_entropy(logits, target);
    (loss * weight).backward();
    return {loss.item<double>(), logits.detach(), x.detach()};
  }

  // Recompute: keep the state before each of the k iterations, then walk back through them,
  // rebuilding one iteration's graph at a time and chaining the state gradient by hand. The
  // recall terms Wh x0 enter every iteration as leaves whose gradients add up over the k
  // iterations; one backward pass through Wh at the end carries the sum to x0 and Wh.
  const Loop leaves = loop.with_recall_leaves();
  std::vector<torch::Tensor> states;
  torch::Tensor last;
  {
    torch::NoGradGuard no_grad;
    torch::Tensor x = n > 0 ? start : loop.x0().detach();
    for (int64_t t = 0; t < k; ++t) {
      states.push_back(x);
      x = leaves.step(x);
    }
    last = x;
  }
  const torch::Tensor xk = last.detach().requires_grad_(true);
  const torch::Tensor logits = loop.logits(xk);
  const torch::Tensor loss = cross_entropy(logits, target);
  (loss * weight).backward();
  torch::Tensor grad = xk.grad();
  for (int64_t t = k - 1; t >= 0; --t) {
    const torch::Tensor xt = states[t].detach().requires_grad_(true);
    leaves.step(xt).backward(grad);
    grad = xt.grad();
  }
  // x0 receives gradient through the recall, and as the starting state when n = 0.
  loop.backward_from_leaves(leaves, n == 0 ? grad : torch::Tensor());
  return {loss.item<double>(), logits.detach(), last};
}

LossResult fixed_point_backward(LoopedTransformerImpl& model, const torch::Tensor& input, const torch::Tensor& target,
                                const FixedPointGradient& o, double weight, FixedPointStats* stats) {
  FixedPointStats local;
  FixedPointStats& st = stats ? *stats : local;
  st = {};
  const Loop loop(model, input);  // x0 and Wh x0 in the graph: the recall carries gradient to them

  // Forward to the fixed point, without gradient.
  torch::Tensor x;
  {
    torch::NoGradGuard no_grad;
    const StillResult forward =
        solve_until_still(loop.x0().detach(), o.max_iters, o.batch_tolerance, [&](const torch::Tensor& s) { return loop.step(s); });
    x = forward.x;
    st.forward_iters = forward.iters;
    st.forward_converged = forward.still;
  }

  if (!o.implicit) {  // phantom: damped steps with gradient from x*
    torch::Tensor h = x.detach();
    for (int64_t s = 0; s < o.phantom_steps; ++s)
      h = o.phantom_damping == 1 ? loop.step(h) : o.phantom_damping * loop.step(h) + (1 - o.phantom_damping) * h;
    const torch::Tensor logits = loop.logits(h);
    const torch::Tensor loss = cross_entropy(logits, target);
    (loss * weight).backward();
    return {loss.item<double>(), logits.detach(), h.detach()};
  }

  // Implicit: g = dL/dx* (the head's gradients accumulate on the way).
  const torch::Tensor xs = x.detach().requires_grad_(true);
  const torch::Tensor logits = loop.logits(xs);
  const torch::Tensor loss = cross_entropy(logits, target);
  (loss * weight).backward();
  const torch::Tensor g = xs.grad().clone();
  // One iteration at x* with its graph: J^T u by vector-Jacobian products, then u into the
  // parameters (and through Wh x0 into the projection).
  const torch::Tensor y = loop.step(xs);
  const StillResult adjoint = solve_until_still(g, o.max_iters, o.batch_tolerance, [&](const torch::Tensor& u) {
    return g + torch::autograd::grad({y}, {xs}, {u}, /*retain_graph=*/true)[0];
  });
  const torch::Tensor u = adjoint.x;
  st.adjoint_iters = adjoint.iters;
  st.adjoint_converged = adjoint.still;
  torch::autograd::backward({y}, {u});
  return {loss.item<double>(), logits.detach(), x};
}

}  // namespace looplab
