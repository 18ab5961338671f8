// The paper's learning-rate schedule (B.1.2) as its released code computes it (SPEC section 2):
// an exponential warm-up over epochs 0-8, the full rate from epoch 9, a 10x cool-down.
#pragma once

#include <cmath>
#include <cstdint>

namespace looplab {

// The first epoch at the full rate: the released code's ExponentialWarmup acts for its first
// 10 steps (one per epoch, the first at construction), so epochs 0..8 are scaled and epoch 9 is not.
inline constexpr int64_t kWarmupEpochs = 9;

// w(e) = 1 - exp(-(e + 1) / 10) for e < kWarmupEpochs (0.095 at epoch 0 ... 0.593 at epoch 8),
// then 1.
inline double warmup_factor(int64_t epoch) {
  return epoch < kWarmupEpochs ? 1.0 - std::exp(-static_cast<double>(epoch + 1) / 10.0) : 1.0;
}

// The learning rate of epoch `epoch` (from 0): lr * w(epoch), times 0.1 from `cooldown_epoch` on
// (the released code's MultiStepLR([60], 0.1)).
inline double learning_rate(double lr, int64_t epoch, int64_t cooldown_epoch = 60) {
  return lr * warmup_factor(epoch) * (epoch >= cooldown_epoch ? 0.1 : 1.0);
}

}  // namespace looplab
