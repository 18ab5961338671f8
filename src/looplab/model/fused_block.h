// One block iteration without gradient, fused (issue 17, part 2): at the widths CPU users run
// (64-128) most of an iteration's time was not in its dense products but in the dozens of
// whole-tensor passes around them (RoPE, QK-norm, RMSNorm, residual and recall additions, the
// window gather, permutes and copies). Here the dense layers stay whole-tensor products
// (at::linear: the BLAS at its best shapes) and everything between two of them is one pass
// over the rows: the recall addition and the pre-norm; RoPE and QK-norm of every head; the
// neighbourhood attention (W keys per query, no gather); the peri-norm, the residual and the
// post-norm. GELU stays LibTorch's vectorized one, in place. It serves every iteration run
// without gradient (evaluation, early exit, the analysis's convergence loop, the n no-gradient
// iterations of the progressive loss) on CPU float32 with local attention and any recall and
// pre/peri/post norm; the GRU norm, other devices and dtypes, and gradient-recording calls keep
// the plain path, as does LOOPLAB_ENGINE=plain (tests/model/fused_block_test.cpp checks the
// one against the other).
#pragma once

#include <torch/torch.h>

namespace looplab {

struct BlockImpl;
struct Positions;

bool fused_block_applies(const BlockImpl& block, const torch::Tensor& x, const Positions& p);

// The same as BlockImpl::forward(x, wh_x0, p) where fused_block_applies.
torch::Tensor fused_block_forward(const BlockImpl& block, const torch::Tensor& x, const torch::Tensor& wh_x0,
                                  const Positions& p);

}  // namespace looplab
