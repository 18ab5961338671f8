// The CPU's model and the instruction-set extensions that decide looplab's kernels (cpuid, with
// the operating system's consent to the AVX and AVX-512 registers from xgetbv): the BLAS kernel
// (platform/blas_kernel.h), bf16-mixed's default (platform/runtime.h) and `looplab info
// --system`. No LibTorch here.
#pragma once

#include <string>
#include <vector>

namespace looplab {

struct CpuFeatures {
  std::string vendor, model;
  bool sse3 = false, avx = false, avx2 = false, fma = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512_bf16 = false, avx512_fp16 = false;
  bool amx = false;  // AMX tiles (with AVX512-BF16: oneDNN's bfloat16 products run on them)
};
CpuFeatures cpu_features();
std::vector<std::string> feature_names(const CpuFeatures& f);  // e.g. {"avx2", "fma", "avx512f", ...}

}  // namespace looplab
