// One block iteration, fused (issue 17, part 2): at the widths CPU users run (64-128) most of
// an iteration's time was not in its dense products but in the dozens of whole-tensor passes
// around them (RoPE, QK-norm, RMSNorm, residual and recall additions, the window gather,
// permutes and copies) and, with gradient, in autograd's graph of them. Here the dense layers
// stay whole-tensor products (at::linear, at::mm: the BLAS at its best shapes) and everything
// between two of them is one pass over the rows: the recall addition and the pre-norm; RoPE
// and QK-norm of every head; the neighbourhood attention (W keys per query, no gather); the
// peri-norm, the residual and the post-norm. GELU stays LibTorch's vectorized one.
//
// Without gradient it serves evaluation, early exit, the analysis's convergence loop and the n
// no-gradient iterations of the progressive loss; there, where the batch gives every thread a
// tile, each thread runs the whole block on tiles of whole sequences (products single-threaded),
// so that a tile's intermediates stay in its core's cache and an iteration is one parallel
// region. With gradient (the k iterations) it is one autograd node with a hand-written
// backward: the same passes in reverse, the products' gradients as whole-tensor products, the
// few intermediates it needs kept from the forward.
// That backward is not itself differentiable: a double backward (the analysis's Jacobian-
// vector products) throws, and the analysis builds its graphs inside a PlainEngine scope.
//
// It covers CPU float32 and float64, neighbourhood attention and full attention up to 256
// tokens (every position a key), any recall and pre/peri/post norm. The GRU norm, longer full
// attention, other devices and dtypes, a block whose attention has
// `fused` off, LOOPLAB_ENGINE=plain and PlainEngine scopes keep the plain LibTorch path
// (tests/model/fused_block_test.cpp checks the one against the other, and the gradients
// against finite differences).
#pragma once

#include <torch/torch.h>

namespace looplab {

struct BlockImpl;
struct Positions;

// True under LOOPLAB_ENGINE=plain or inside a PlainEngine scope on this thread: every block
// runs the plain LibTorch formula (for debugging, and where a twice-differentiable graph is
// needed).
bool plain_engine();

class PlainEngine {
 public:
  PlainEngine();
  ~PlainEngine();
  PlainEngine(const PlainEngine&) = delete;
  PlainEngine& operator=(const PlainEngine&) = delete;
};

bool fused_block_applies(const BlockImpl& block, const torch::Tensor& x, const Positions& p);

// C [m, n] = A [m, k] W^T (+ b where defined), float32 rows, W [n, k] and b [n] a linear
// layer's: single-threaded, for a tile inside a parallel region (oneDNN's sgemm where built
// with it, else ATen's product). Shared with the fused readout (model/fused_readout.h).
void tile_linear(const float* A, int64_t m, const torch::Tensor& W, const torch::Tensor& b, float* C);

// The same as BlockImpl::forward(x, wh_x0, p) where fused_block_applies; differentiable
// (once) when gradients are recorded.
torch::Tensor fused_block_forward(const BlockImpl& block, const torch::Tensor& x, const torch::Tensor& wh_x0,
                                  const Positions& p);

}  // namespace looplab
