// Arithmetic for the fused engine's row loops (kernels.cpp, full_attention.cpp, block.cpp, block_tiles.cpp, eval/readout.cpp):
// functions written in plain arithmetic so that a loop of them vectorizes (libm's are a call per
// element), and the attribute that compiles such loops for AVX-512 and AVX2 beside baseline
// x86-64. These files are compiled with reordered additions and without errno (CMakeLists.txt).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace looplab {

// The per-token loops that run at every iteration, compiled for AVX-512 and AVX2 beside the
// baseline x86-64 (chosen once at load time): the rest of looplab is built for any x86-64.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define LOOPLAB_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
// The same by micro-architecture level, for the loops that narrow float32 to bfloat16 (16-bit
// lanes want AVX-512 BW and VL, which "avx512f" alone lacks: GELU and its rounding measured 3.4x
// slower under it, 50 ms against 15 for 16 million values on one core) and that gain from FMA
// ("avx2" alone lacks it): x86-64-v4 (AVX-512 F, BW, VL, DQ) and x86-64-v3 (AVX2, FMA, F16C).
#define LOOPLAB_CLONES_BY_LEVEL __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define LOOPLAB_CLONES
#define LOOPLAB_CLONES_BY_LEVEL
#endif

// exp(x) for x <= 0 (a softmax's shifted scores) in plain arithmetic, so that a loop of them
// vectorizes (libm's expf is a call per element): Cephes' expf, x = n ln 2 + r with |r| <= ln2/2,
// a degree-6 polynomial in r, times 2^n built in the exponent bits. Relative error ~1e-7; 0 for
// x below -87, where expf is below float's normal range. Doubles take libm's exp.
inline float exp_nonpositive(float x) {
  x = std::max(x, -87.0f);
  const float n = std::floor(x * 1.44269504088896341f + 0.5f);
  const float r = x - n * 0.693359375f - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}
inline double exp_nonpositive(double x) { return std::exp(x); }

// erf(a) for a >= 0 by Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7, the formula of
// ATen's own vectorized erf): 1 - t (a1 + t (a2 + ...)) exp(-a^2), t = 1 / (1 + p a); `gauss`
// receives exp(-a^2).
inline float erf_nonnegative(float a, float& gauss) {
  const float t = 1.0f / (1.0f + 0.3275911f * a);
  float poly = 1.061405429f;
  poly = poly * t - 1.453152027f;
  poly = poly * t + 1.421413741f;
  poly = poly * t - 0.284496736f;
  poly = poly * t + 0.254829592f;
  gauss = exp_nonpositive(-a * a);
  return 1.0f - poly * t * gauss;
}

// GELU, exact form x/2 (1 + erf(x / sqrt 2)), erf odd in its argument. Float only (the readout's
// and bf16-mixed's hidden layer).
inline float gelu_erf(float x) {
  float gauss;
  const float erf_a = erf_nonnegative(std::abs(x) * 0.70710678118654752f, gauss);
  return 0.5f * x * (1.0f + (x < 0 ? -erf_a : erf_a));
}

// GELU's derivative, Phi(x) + x phi(x) with Phi(x) = (1 + erf(x / sqrt 2)) / 2 and phi(x) =
// exp(-x^2 / 2) / sqrt(2 pi).
inline float gelu_erf_derivative(float x) {
  float gauss;  // exp(-x^2 / 2)
  const float erf_a = erf_nonnegative(std::abs(x) * 0.70710678118654752f, gauss);
  return 0.5f * (1.0f + (x < 0 ? -erf_a : erf_a)) + x * 0.39894228040143268f * gauss;
}

// x rounded to bfloat16, to nearest with ties to even as ATen's conversion (bit pattern); NaN stays a
// (quiet) NaN.
inline uint16_t bf16_bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  const uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
  return (u & 0x7FFFFFFFu) > 0x7F800000u ? static_cast<uint16_t>((u >> 16) | 0x40u) : static_cast<uint16_t>(rounded);
}

}  // namespace looplab
