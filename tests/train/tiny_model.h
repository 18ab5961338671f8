// The training and halting tests' subject: a tiny prefix-sums model in float64 (width 8, 2 heads)
// drawn from `seed`, small enough that Jacobians and finite differences are computed whole.
// `shrink` scales the block weights other than the norms (0.5 makes external recall with post
// norm contractive, tests/analysis/fixed_point_test.cpp).
#pragma once

#include <string>

#include <torch/torch.h>

#include "looplab/model/looped_transformer.h"

namespace looplab {

inline LoopedTransformer tiny_model(uint64_t seed, Recall recall = Recall::kExternal, Norm norm = Norm::kPost,
                                    bool halt_head = false, double shrink = 1.0) {
  torch::manual_seed(seed);
  ModelConfig c = default_config("prefix-sums", recall, norm, 8);
  c.heads = 2;
  c.halt_head = halt_head;
  LoopedTransformer model(c);
  model->to(torch::kFloat64);
  if (shrink != 1.0) {
    torch::NoGradGuard no_grad;
    for (auto& item : model->named_parameters())
      if (item.key().find("recur_blocks") == 0 && item.key().find("norm") == std::string::npos) item.value().mul_(shrink);
  }
  return model;
}

}  // namespace looplab
