// The fused engine's dense products, row-major.
//
// float32 and float64: oneDNN's sgemm for float32 where it was found at build time
// (CMakeLists.txt: 1.5-2.5x OpenBLAS's rate at these thin shapes), ATen's otherwise.
// LOOPLAB_DNNL=off sends them to ATen's BLAS in a build with oneDNN (OpenBLAS with Debian's
// LibTorch, MKL inside the PyTorch wheel's): for measuring the one against the other.
//
// bf16-mixed (issue 47): the activation operand is a bfloat16 tensor, the weight's bfloat16
// forms are made once per optimizer step (bf16_weight), and the product accumulates and returns
// float32, the bias added in float32. Unlike autocast, whose products return bfloat16, the output
// stays float32 (docs/performance.md says why: rounding the outputs made the gradient through 30
// iterations of a half-trained model point 50 degrees away from float64's and its training
// collapse). By library:
//  - x W^T and dy W: ATen's batch-reduce GEMM micro-kernels (at::native::cpublas::brgemm, the
//    wheel's oneDNN ukernels that ATen's CPU flash attention runs on: AMX tiles where the CPU has
//    them, AVX512-BF16 where it does not), over the weight packed once per step in their layout;
//  - dy^T x (the weight gradients), and the products whose shapes the micro-kernels do not take
//    (an odd reduction, outputs not a multiple of 16 wide): MKL's cblas_gemm_bf16bf16f32 inside
//    the PyTorch wheel's libtorch_cpu, oneDNN's dnnl_gemm_bf16bf16f32 where LibTorch loads
//    Debian's libdnnl; elsewhere ATen's bfloat16 product, converted (its output rounded).
// LOOPLAB_BRGEMM=off sends the first kind to the second's library too (for measuring).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>

namespace looplab::engine {

// x W^T + b: x [N, K], W [M, K], b [M] (or undefined) -> [N, M]. Whole-tensor, multithreaded.
// x bfloat16: a bf16-mixed product (W and b float32; W's bfloat16 copy is used), float32 out.
torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& W, const torch::Tensor& b);
// dy^T x: the weight gradient of a linear layer, dy [N, M], x [N, K] -> [M, K]. Both bfloat16:
// a bf16-mixed product, float32 out.
torch::Tensor weight_gradient(const torch::Tensor& dy, const torch::Tensor& x);
// dy W: the input gradient of a linear layer, dy [N, M], W [M, K] -> [N, K]. dy bfloat16: with
// W's bfloat16 copy, float32 out.
torch::Tensor input_gradient(const torch::Tensor& dy, const torch::Tensor& W);

// C [m, n] = A [m, k] W^T (+ b where defined), rows of T (float or double), W [n, k] and b [n] a
// linear layer's: single-threaded, for a tile inside a parallel region (inside one, oneDNN and
// the BLAS run on the calling thread alone).
template <typename T>
void tile_linear(const T* A, int64_t m, const torch::Tensor& W, const torch::Tensor& b, T* C);
// The bfloat16 forms of a float32 weight W [M, K].
struct Bf16Weight {
  torch::Tensor rows;      // W in bfloat16, [M, K]
  torch::Tensor packed_t;  // W^T [K, M] in the micro-kernels' layout (x W^T); undefined where they do not apply
  torch::Tensor packed;    // W [M, K] in that layout, as the right operand of dy W; undefined likewise
};

// The same in bf16-mixed: A [m, k] bfloat16 (uint16 bit patterns), W16 the weight's bfloat16
// forms (bf16_weight, taken before the parallel region), b float32, C float32.
void tile_linear_bf16(const uint16_t* A, int64_t m, const Bf16Weight& W16, const torch::Tensor& b, float* C);

// The bfloat16 forms of a float32 weight, made when first asked for and again only after the
// weight has changed (its version counter, which every in-place update such as AdamW's step
// advances): once per optimizer step, whatever the iterations and calls in between. Thread-safe;
// the forms are held while the weight lives.
Bf16Weight bf16_weight(const torch::Tensor& W);
// How many weights' bfloat16 forms have been made in this process (tests count them).
int64_t bf16_weight_casts();

// Rounds n float32 values to bfloat16 (to nearest even, as ATen's conversion).
void round_to_bf16(const float* x, uint16_t* out, int64_t n);

// Which libraries run the bf16-mixed products, e.g. "ATen's brgemm micro-kernels (x W^T, dy W) and
// MKL's cblas_gemm_bf16bf16f32 (dy^T x)".
std::string bf16_products_library();

}  // namespace looplab::engine
