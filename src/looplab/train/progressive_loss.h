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
};

// Backpropagates weight * loss into the parameters' .grad (accumulating). The n iterations
// run in inference mode. With `recompute`, only the k states are kept and each iteration's
// activations are recomputed during the backward pass, so memory stays flat in k.
LossResult progressive_backward(LoopedTransformerImpl& model, const torch::Tensor& input, const torch::Tensor& target,
                                int64_t n, int64_t k, double weight, bool recompute);

}  // namespace looplab
