#include "looplab/train/halt_loss.h"

namespace looplab {

HaltLoss halt_backward(LoopedTransformerImpl& model, const torch::Tensor& state, const torch::Tensor& right, double weight) {
  const torch::Tensor q = model.halt_logits(state.detach());  // [B]
  const torch::Tensor y = right.to(q.scalar_type());           // [B], 1 where exactly right
  const torch::Tensor loss = torch::binary_cross_entropy_with_logits(q, y);
  (loss * weight).backward();
  HaltLoss out;
  out.loss = loss.item<double>();
  out.accuracy = ((q.detach() > 0) == right).to(torch::kFloat64).mean().item<double>();
  return out;
}

}  // namespace looplab
