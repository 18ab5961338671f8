// The fused engine's dense products, row-major: oneDNN's sgemm for float32 where it was found
// at build time (CMakeLists.txt: 1.5-2.5x OpenBLAS's rate at these thin shapes), ATen's
// otherwise. LOOPLAB_DNNL=off sends them to ATen's BLAS in a build with oneDNN (OpenBLAS with
// Debian's LibTorch, MKL inside the PyTorch wheel's): for measuring the one against the other.
#pragma once

#include <torch/torch.h>

#include <cstdint>

namespace looplab::engine {

// x W^T + b: x [N, K], W [M, K], b [M] (or undefined) -> [N, M]. Whole-tensor, multithreaded.
torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& W, const torch::Tensor& b);
// dy^T x: the weight gradient of a linear layer, dy [N, M], x [N, K] -> [M, K].
torch::Tensor weight_gradient(const torch::Tensor& dy, const torch::Tensor& x);
// dy W: the input gradient of a linear layer, dy [N, M], W [M, K] -> [N, K].
torch::Tensor input_gradient(const torch::Tensor& dy, const torch::Tensor& W);

// C [m, n] = A [m, k] W^T (+ b where defined), rows of T (float or double), W [n, k] and b [n] a
// linear layer's: single-threaded, for a tile inside a parallel region (inside one, oneDNN and
// the BLAS run on the calling thread alone).
template <typename T>
void tile_linear(const T* A, int64_t m, const torch::Tensor& W, const torch::Tensor& b, T* C);

}  // namespace looplab::engine
