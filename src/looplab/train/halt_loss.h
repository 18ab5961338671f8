// The halting head's loss (`looplab train --halt-head`, issue 35 point 3): binary cross-entropy
// of its logit on a state against whether the answer read from that state is exactly right.
#pragma once

#include <torch/torch.h>

#include "looplab/model/looped_transformer.h"

namespace looplab {

struct HaltLoss {
  double loss = 0;      // mean binary cross-entropy over the batch
  double accuracy = 0;  // fraction of examples where (logit > 0) == right
};

// state: [B, L, d] (read detached: only the head gets gradient); right: [B] bool, the answer
// exactly right. Backpropagates weight * loss into the head's .grad (accumulating).
HaltLoss halt_backward(LoopedTransformerImpl& model, const torch::Tensor& state, const torch::Tensor& right, double weight);

}  // namespace looplab
