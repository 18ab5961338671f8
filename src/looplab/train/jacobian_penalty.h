// The Jacobian penalty (`looplab train --jacobian-weight G`, issue 35 point 2; Bai et al. 2021,
// "Stabilizing Equilibrium Models by Jacobian Regularization"): G ||df/dx||_F^2 / (L d) of one
// iteration f at the state where the loss is read, added to the loss. ||J||_F^2 is estimated
// per example by Hutchinson's trick with one Gaussian projection: E_v ||v^T J||^2 = ||J||_F^2
// for v ~ N(0, I), where v^T J is one vector-Jacobian product. Its gradient goes through that
// product (double backward), into the block's weights and, by the recall, into x0.
#pragma once

#include <torch/torch.h>

#include "looplab/model/looped_transformer.h"

namespace looplab {

// Per example b, ||v_b^T J_b||^2 / (L d) with J_b = df/dx at state_b ([B], in the graph when
// `create_graph`). state: [B, L, d] (treated as a constant); v: [B, L, d].
torch::Tensor jacobian_estimate(const Loop& loop, const torch::Tensor& state, const torch::Tensor& v, bool create_graph);

// Backpropagates weight * mean_b(estimate) into the parameters' .grad (accumulating) and
// returns the mean estimate. The call runs inside a PlainEngine scope (twice differentiable).
double jacobian_backward(LoopedTransformerImpl& model, const torch::Tensor& input, const torch::Tensor& state,
                         const torch::Tensor& v, double weight);

}  // namespace looplab
