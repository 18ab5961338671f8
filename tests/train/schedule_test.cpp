#include "looplab/train/schedule.h"

#include <gtest/gtest.h>

namespace looplab {
namespace {

TEST(Schedule, WarmupPlateauCooldown) {
  EXPECT_NEAR(learning_rate(1e-3, 0), 1e-3 * (1 - std::exp(-0.1)), 1e-18);
  // "reaching 63% of the target learning rate by epoch 9" (paper B.1.2)
  EXPECT_NEAR(learning_rate(1.0, 9), 1 - std::exp(-1.0), 1e-15);
  EXPECT_NEAR(learning_rate(1.0, 9), 0.632, 0.001);
  EXPECT_NEAR(learning_rate(1.0, 59), 1 - std::exp(-6.0), 1e-15);
  EXPECT_NEAR(learning_rate(1.0, 60), 0.1 * (1 - std::exp(-6.1)), 1e-15);
  EXPECT_NEAR(learning_rate(1.0, 99), 0.1 * (1 - std::exp(-10.0)), 1e-15);
  EXPECT_NEAR(learning_rate(1.0, 30, 30), 0.1 * (1 - std::exp(-3.1)), 1e-15);
}

}  // namespace
}  // namespace looplab
