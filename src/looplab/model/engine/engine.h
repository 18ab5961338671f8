// The engines that run a block iteration, and the choice between them.
//
// plain: the block as LibTorch operators (model/looped_transformer.cpp), on any device, dtype
//   and precision, twice differentiable. Its reference.
// fused: looplab's own CPU engine (this folder, issue 17). At the widths CPU users run (64-256)
//   most of an iteration's time was not in its dense products but in the dozens of
//   whole-tensor passes around them (RoPE, QK-norm, RMSNorm, residual and recall additions, the
//   window gather, permutes and copies) and, with gradient, in autograd's graph of them. Here
//   the dense layers stay whole-tensor products (products.h) and everything between two of
//   them is one pass over the rows (kernels.h): the recall addition and the pre-norm; RoPE and
//   QK-norm of every head; the attention (W keys per query, no gather); the peri-norm, the
//   residual and the post-norm.
//   - Without gradient (evaluation, early exit, the analysis's convergence loop, the n
//     no-gradient iterations of the progressive loss), where the batch gives every thread a
//     tile, each thread runs the whole block on tiles of whole sequences (block_tiles.cpp).
//   - With gradient (the k iterations), one autograd node with a hand-written backward
//     (block.cpp: the forward and backward side by side). That backward is not itself
//     differentiable: a double backward throws; the analysis's Jacobian-vector products run
//     inside a PlainEngine scope.
//   - The head's readout during evaluation is fused too (eval/readout.h).
//   - bf16-mixed (issue 47): the same passes in float32 around bfloat16 products with float32
//     accumulation and output (products.h), the weights cast once per optimizer step; the
//     model's other Linear layers (the projection, Wh x0, the head) take the same products
//     through mixed_linear. Autocast, the plain engine's bf16-mixed, rounds every product's
//     output to bfloat16 as well; here outputs stay float32.
//
// The fused engine runs a block only where it implements everything the block uses (its
// allow-list, engine.cpp): CPU, float32 or float64 (float32 under bf16-mixed), recall none, external,
// internal or fixed, pre, peri or post norm, width <= 1024, heads <= 64, at most 256 keys per
// query (a window, or full attention up to 256 tokens). Anything else, LOOPLAB_ENGINE=plain and
// PlainEngine scopes run the plain engine. tests/model/fused_block_test.cpp checks the one
// against the other, and the gradients against finite differences.
#pragma once

#include <torch/torch.h>

#include <string>

#include "looplab/model/config.h"

namespace looplab {

struct BlockImpl;
struct Positions;

// True under LOOPLAB_ENGINE=plain or inside a PlainEngine scope on this thread: every block
// runs the plain engine (for debugging, and where a twice-differentiable graph is needed).
bool plain_engine();
// True inside a PlainEngine scope on this thread only (not under LOOPLAB_ENGINE=plain): the
// graph must then be twice differentiable, so the plain attention takes its formula rather
// than scaled_dot_product_attention (model/looped_transformer.h).
bool plain_engine_scope();

class PlainEngine {
 public:
  PlainEngine();
  ~PlainEngine();
  PlainEngine(const PlainEngine&) = delete;
  PlainEngine& operator=(const PlainEngine&) = delete;
};

// The engine a model's blocks run on, and why the plain one where it is.
struct EngineChoice {
  bool fused = false;
  std::string reason;  // empty where fused
  // "fused", or "plain (REASON)".
  std::string describe() const;
};

// The engine for a model of configuration `c` on `device` ("cpu" or "cuda") with parameters of
// `dtype` ("float32", "float64" or "bfloat16") under `precision` ("float32" or "bf16-mixed"),
// at the configuration's training grid. The one place that names it: `looplab info` prints it.
EngineChoice engine_for(const ModelConfig& c, const std::string& device = "cpu", const std::string& dtype = "float32",
                        const std::string& precision = "float32");

// The same choice for one block call: true where the fused engine runs it.
bool fused_block_applies(const BlockImpl& block, const torch::Tensor& x, const Positions& p);

// The same as the plain BlockImpl::forward(x, wh_x0, p) where fused_block_applies;
// differentiable (once) when gradients are recorded.
torch::Tensor fused_block_forward(const BlockImpl& block, const torch::Tensor& x, const torch::Tensor& wh_x0,
                                  const Positions& p);

// Whether bf16-mixed runs on this CPU and how, one line for `looplab info --system`: "yes: ..."
// naming the instructions (AMX, or AVX512-BF16) and the library of its products, or "no: ..."
// saying why float32 stays the default.
std::string bf16_mixed_on_this_cpu();

// Under bf16-mixed on the fused engine (CPU autocast on, no PlainEngine scope, x and W float32
// on the CPU), a Linear layer is mixed_linear: x [..., K] rounded to bfloat16 times W's
// bfloat16 copy, accumulated and returned in float32 with the float32 bias b [M] (undefined:
// none). Differentiable once; its backward is bf16-mixed products too.
bool mixed_linear_applies(const torch::Tensor& x, const torch::Tensor& W);
torch::Tensor mixed_linear(const torch::Tensor& x, const torch::Tensor& W, const torch::Tensor& b);

}  // namespace looplab
