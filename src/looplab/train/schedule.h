// The paper's learning-rate schedule (B.1.2): exponential warm-up reaching 63% of the target by
// epoch 9, constant through epoch 59, then a 10x cool-down.
#pragma once

#include <cmath>
#include <cstdint>

namespace looplab {

inline double learning_rate(double lr, int64_t epoch, int64_t cooldown_epoch = 60) {
  return lr * (1.0 - std::exp(-static_cast<double>(epoch + 1) / 10.0)) * (epoch >= cooldown_epoch ? 0.1 : 1.0);
}

}  // namespace looplab
