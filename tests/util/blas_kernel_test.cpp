// The choice of OpenBLAS kernel: which kernels a CPU can run, and which detections are generic
// fallbacks (the re-execution itself is tested from the command line, tests/cli/cli_test.sh).
#include "looplab/platform/blas_kernel.h"

#include <gtest/gtest.h>

namespace looplab {
namespace {

CpuFeatures avx2() {
  CpuFeatures f;
  f.sse3 = f.avx = f.avx2 = f.fma = true;
  return f;
}

CpuFeatures avx512(bool bf16) {
  CpuFeatures f = avx2();
  f.avx512f = f.avx512bw = f.avx512vl = true;
  f.avx512_bf16 = bf16;
  return f;
}

TEST(BlasKernel, CandidatesBestFirst) {
  EXPECT_EQ(kernel_candidates(avx512(true)), (std::vector<std::string>{"Cooperlake", "SkylakeX", "Haswell"}));
  EXPECT_EQ(kernel_candidates(avx512(false)), (std::vector<std::string>{"SkylakeX", "Haswell"}));
  EXPECT_EQ(kernel_candidates(avx2()), (std::vector<std::string>{"Haswell"}));
  CpuFeatures old;
  old.sse3 = true;
  EXPECT_TRUE(kernel_candidates(old).empty());
}

TEST(BlasKernel, GenericFallbacksAreRecognised) {
  EXPECT_TRUE(is_fallback("Prescott", avx512(true)));   // the 0.3.21 fallback on newer Xeons
  EXPECT_TRUE(is_fallback("Haswell", avx512(false)));   // AVX2 kernels on an AVX-512 CPU
  EXPECT_FALSE(is_fallback("SkylakeX", avx512(true)));
  EXPECT_FALSE(is_fallback("cooperlake", avx512(true)));  // names are case-insensitive
  EXPECT_TRUE(is_fallback("Sandybridge", avx2()));
  EXPECT_FALSE(is_fallback("Zen", avx2()));
  EXPECT_FALSE(is_fallback("Haswell", avx2()));
  CpuFeatures old;
  old.sse3 = true;
  EXPECT_FALSE(is_fallback("Prescott", old));  // nothing better to offer
}

TEST(BlasKernel, FeaturesOfThisCpuAreConsistent) {
  const CpuFeatures f = cpu_features();
  if (f.avx2) EXPECT_TRUE(f.avx);
  if (f.avx512_bf16) EXPECT_TRUE(f.avx512f);
  const auto names = feature_names(f);
  EXPECT_EQ(std::find(names.begin(), names.end(), "avx2") != names.end(), f.avx2);
}

}  // namespace
}  // namespace looplab
