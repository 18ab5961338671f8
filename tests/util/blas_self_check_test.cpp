// The BLAS LibTorch runs on (linked here through LibTorch) against a plain loop: the check that
// looplab runs on a kernel it chose, here on whatever kernel is in use.
#include "looplab/platform/blas_kernel.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace looplab {
namespace {

TEST(BlasSelfCheck, TheKernelInUseAgreesWithAPlainLoop) {
  torch::mm(torch::ones({4, 4}), torch::ones({4, 4}));  // the BLAS is loaded and initialised
  const BlasState s = blas_state();
  if (s.library.empty()) GTEST_SKIP() << "not OpenBLAS";
  EXPECT_FALSE(s.kernel.empty());
  EXPECT_EQ(blas_self_check(), "");
}

}  // namespace
}  // namespace looplab
