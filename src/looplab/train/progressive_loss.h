// The progressive loss of Bansal et al. (2022), as the paper trains with it (SPEC section 2):
// n iterations from x0 without gradient, then k iterations with gradient, cross-entropy of the
// head's output after the last of them.
#pragma once

#include <torch/torch.h>

#include "looplab/model/looped_transformer.h"

namespace looplab {

struct LossResult {
  double loss;           // mean cross-entropy over tokens
  torch::Tensor logits;  // [B, L, C_out] after the n + k iterations, detached
  torch::Tensor state;   // [B, L, d], the state the head read them from, detached
};

// Backpropagates weight * loss into the parameters' .grad (accumulating). The n iterations
// run in inference mode. With `recompute`, only the k states are kept and each iteration's
// activations are recomputed during the backward pass, so memory stays flat in k.
LossResult progressive_backward(LoopedTransformerImpl& model, const torch::Tensor& input, const torch::Tensor& target,
                                int64_t n, int64_t k, double weight, bool recompute);

// The gradient at the fixed point (TrainOptions::gradient "phantom" and "implicit"). Forward:
// from x0 without gradient until the relative step ||x_{t+1} - x_t|| / ||x_t|| of the batch is
// below `batch_tolerance`, at most `max_iters` iterations.
//  - phantom: then `phantom_steps` steps x <- d f(x) + (1 - d) x with gradient, the loss after
//    the last (with d = 1 and no convergence, BPTT through phantom_steps iterations from x_n);
//  - implicit: the loss at x*, and the adjoint u = g + J^T u (g = dL/dx*, J = df/dx at x*) by
//    fixed-point iteration on vector-Jacobian products to the same tolerance, at most
//    `max_iters` steps; then u backpropagated through one iteration f(x*, x0) into the
//    parameters: the implicit-function gradient, in memory constant in the iterations.
struct FixedPointGradient {
  bool implicit = false;  // else phantom
  int64_t max_iters = 30;
  double batch_tolerance = 1e-4;
  int64_t phantom_steps = 5;
  double phantom_damping = 0.5;
};
struct FixedPointStats {
  int64_t forward_iters = 0;
  bool forward_converged = false;
  int64_t adjoint_iters = 0;   // implicit only
  bool adjoint_converged = false;
};
LossResult fixed_point_backward(LoopedTransformerImpl& model, const torch::Tensor& input, const torch::Tensor& target,
                                const FixedPointGradient& o, double weight, FixedPointStats* stats = nullptr);

}  // namespace looplab
