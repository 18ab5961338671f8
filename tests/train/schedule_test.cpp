#include "looplab/train/schedule.h"

#include <gtest/gtest.h>

namespace looplab {
namespace {

// The released code's schedule (SPEC section 2), as decimals worked out by hand from its
// warm-up (1 - exp(-(e+1)/10) while it acts, epochs 0-8) and MultiStepLR([60], 0.1).
TEST(Schedule, WarmupStopsAtEpochNineThenCooldown) {
  EXPECT_NEAR(learning_rate(1e-3, 0), 1e-3 * 0.09516258196404048, 1e-18);
  EXPECT_NEAR(learning_rate(1.0, 8), 0.5934303402594009, 1e-15);
  // From epoch 9 on the warm-up no longer acts: the full rate, not 0.632 (looplab before
  // 2026-12-03 kept it rising: 0.955 at epoch 30, 0.998 at 59).
  EXPECT_EQ(learning_rate(1.0, 9), 1.0);
  EXPECT_EQ(learning_rate(3e-4, 30), 3e-4);
  EXPECT_EQ(learning_rate(1.0, 59), 1.0);
  EXPECT_NEAR(learning_rate(1.0, 60), 0.1, 1e-16);
  EXPECT_NEAR(learning_rate(1.0, 99), 0.1, 1e-16);
  // The cool-down epoch is a setting; the warm-up still scales the epochs before 9.
  EXPECT_NEAR(learning_rate(1.0, 30, 30), 0.1, 1e-16);
  EXPECT_NEAR(learning_rate(1.0, 5, 5), 0.1 * 0.4511883639059736, 1e-15);
}

}  // namespace
}  // namespace looplab
