// The looped transformer of SPEC section 1 (paper sections 3 and 5, appendix B.1), in one
// file to read top to bottom: RMSNorm, N-D RoPE, attention (full or neighbourhood), the
// block with its recall and normalization variants, and the model that iterates it.
//
// Module and parameter names are the paper's reference state-dict keys (projection.*,
// recur_blocks.{i}.attn.qkv.*, ..., head.3.*), so weights move between looplab and the
// paper's PyTorch code unchanged.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <vector>

#include "looplab/model/config.h"

namespace looplab {

// torch::nn::Linear (same parameters, same names) whose forward is ATen's linear, as Python's
// F.linear is: on a contiguous [B, L, in] input that is one matrix product with the bias folded
// in, where the C++ frontend's forward runs the product and then adds the bias in a second
// pass over the output (docs/performance.md: this was most of looplab's gap to PyTorch eager).
// clone() is LinearImpl's and returns a plain LinearImpl: looplab never clones modules. Under
// bf16-mixed on the fused engine it is the engine's bfloat16 product with float32 output
// (mixed_linear, model/engine/engine.h); under the plain engine's autocast, autocast's.
struct AtenLinearImpl : torch::nn::LinearImpl {
  using torch::nn::LinearImpl::LinearImpl;
  torch::Tensor forward(const torch::Tensor& x);
};
TORCH_MODULE(AtenLinear);

// RMSNorm over the last axis with a learnable scale. Epsilon is the machine epsilon of the
// input's dtype, PyTorch's nn.RMSNorm default (which the paper's code used).
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight);

struct RMSNormImpl : torch::nn::Module {
  explicit RMSNormImpl(int64_t dim);
  torch::Tensor forward(const torch::Tensor& x) { return rms_norm(x, weight); }
  torch::Tensor weight;
};
TORCH_MODULE(RMSNorm);

// Where the tokens sit, computed once per forward pass and shared by every iteration.
struct Positions {
  std::vector<int64_t> grid;  // e.g. {512} or {9, 9}; tokens are in row-major order
  torch::Tensor cos, sin;     // [L, head_dim/2] RoPE rotations
  // The same per pair, interleaved [L, head_dim]: (cos, cos) and (-sin, sin), for apply_rope_pairs.
  torch::Tensor pair_cos, pair_sin;
  // Neighbourhood attention only, one of the two: the keys of each query [L, W] (long
  // sequences), or the same window as an additive mask [L, L] of 0 and -inf (short ones).
  torch::Tensor window;
  torch::Tensor window_bias;
  // The keys each query sees [L, W], int64 on the CPU, for the fused iteration
  // (model/engine/engine.h): its window (neighbourhood attention, any length), or every position
  // (full attention, up to kMaxFusedKeys tokens; undefined beyond).
  torch::Tensor keys;
};

// The most keys per query the fused iteration takes.
inline constexpr int64_t kMaxFusedKeys = 256;

// Sequences up to this many times the window's key count use the dense masked form.
inline constexpr int64_t kDenseWindowFactor = 8;

// N-D RoPE angles [L, head_dim/2] (double): per axis k_max = head_dim/(2 n) frequencies
// theta_k = base^(-k/k_max); the angle list is the concatenation over axes of coord * theta.
torch::Tensor rope_angles(const std::vector<int64_t>& grid, int64_t head_dim, double base);

// Rotates consecutive pairs (v[2i], v[2i+1]) of x [..., L, head_dim] by the angles behind
// cos/sin [L, head_dim/2].
torch::Tensor apply_rope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin);
// The same from Positions::pair_cos/pair_sin in three arithmetic operators instead of seven
// (x pair_cos + swap(x) pair_sin, swap exchanging each pair's two values): equal bit for bit,
// since a - b is a + (-b) and addition commutes.
torch::Tensor apply_rope_pairs(const torch::Tensor& x, const torch::Tensor& pair_cos, const torch::Tensor& pair_sin);

// Neighbourhood attention keys [L, W] (int64): along each axis of size n, the query at c sees
// s .. s+w-1 with s = clamp(c - floor(w/2), 0, n - w), so every query sees exactly w keys per
// axis; an axis shorter than w is seen whole. W is the product over axes.
torch::Tensor neighbourhood_index(const std::vector<int64_t>& grid, int64_t window);

// Multi-head attention: qkv projection, RoPE then per-head RMSNorm (QK-norm) on q and k,
// scores scaled by 1/sqrt(head_dim), full or neighbourhood.
struct AttentionImpl : torch::nn::Module {
  explicit AttentionImpl(const ModelConfig& c);
  torch::Tensor forward(const torch::Tensor& u, const Positions& p);

  int64_t heads;
  // LibTorch >= 2 runs full attention and the short sequences' masked window through
  // scaled_dot_product_attention (one operator, fused kernels), and the CPU's iteration without
  // gradient through the fused engine (model/engine/engine.h); neither can be differentiated
  // twice. Whoever differentiates twice (the fixed-point analysis, the Jacobian penalty) does so
  // inside a PlainEngine scope, which both read: the plain formula everywhere.
  AtenLinear qkv{nullptr}, out_proj{nullptr};
  RMSNorm q_norm{nullptr}, k_norm{nullptr};
};
TORCH_MODULE(Attention);

// One weight-tied block: attention then MLP sublayer, with the recall g(x, x0) = Wx x + Wh x0
// and the normalization placement of the config. Absent pieces are null modules.
struct BlockImpl : torch::nn::Module {
  explicit BlockImpl(const ModelConfig& c);
  // Wh x0, the recall's term in the input alone (undefined without recall).
  torch::Tensor recall_input(const torch::Tensor& x0);
  // x: state [B, L, d]; wh_x0: recall_input(x0) [B, L, d].
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& wh_x0, const Positions& p);

  Recall recall_kind;
  Norm norm_kind;
  Attention attn{nullptr};
  torch::nn::Sequential mlp{nullptr};
  AtenLinear Wx{nullptr}, Wh{nullptr};  // Wx acts on the state, Wh on x0
  RMSNorm pre_norm_func{nullptr}, peri_norm_func{nullptr}, post_norm_func{nullptr};
  torch::nn::GRUCell gru{nullptr};  // GRU outer normalization: one cell shared by both sublayers

 private:
  torch::Tensor recall(const torch::Tensor& x, const torch::Tensor& wh_x0);
  torch::Tensor sublayer_step(const torch::Tensor& r, const torch::Tensor& wh_x0, const Positions& p,
                              bool attention);
};
TORCH_MODULE(Block);

class Loop;

class LoopedTransformerImpl : public torch::nn::Module {
 public:
  explicit LoopedTransformerImpl(const ModelConfig& config);

  const ModelConfig& config() const { return config_; }

  // RoPE tables and window indices for a grid, on the model's device and dtype.
  Positions positions(const std::vector<int64_t>& grid) const;

  struct Output {
    torch::Tensor logits;  // [B, L, C_out]
    torch::Tensor state;   // [B, L, d], the state after the last iteration
  };
  // `iterations` iterations of Loop(*this, input), then the head.
  Output forward(const torch::Tensor& input, int64_t iterations);

  // The halting head on a state ([B, L, d] -> [B]): the logit that the answer read from it is
  // exactly right. Throws looplab::Error for a model without one (ModelConfig::halt_head).
  torch::Tensor halt_logits(const torch::Tensor& state);


  // Mixed precision (platform/runtime.h, "bf16-mixed"): every Loop of this model runs its projection,
  // iterations and head under bfloat16 autocast, its weights staying float32; the head's logits
  // come back in float32 for the loss and the readout. Off by default. On the CPU's fused engine
  // (model/engine/engine.h) every product is then bfloat16 with float32 accumulation and output
  // and the state stays float32; on the plain engine LibTorch's autocast runs it.
  void set_mixed_precision(bool mixed) { mixed_precision_ = mixed; }
  bool mixed_precision() const { return mixed_precision_; }

  torch::Device device() const { return projection->weight.device(); }
  torch::Dtype dtype() const { return projection->weight.scalar_type(); }

  AtenLinear projection{nullptr};
  torch::nn::ModuleList recur_blocks{nullptr};
  torch::nn::Sequential head{nullptr};
  AtenLinear halt{nullptr};  // config().halt_head only: Linear(d, 1) on the mean state

 private:
  friend class Loop;  // the one place that assembles the pieces below into a run
  // The grid of an input with `positions` tokens (model/config.h's grid_for). Throws
  // looplab::Error.
  std::vector<int64_t> grid_for(int64_t positions) const;
  // The recall's term in x0 alone, Wh x0, of every block (undefined for blocks without recall).
  std::vector<torch::Tensor> recall_input(const torch::Tensor& x0);
  // One iteration x_{t+1} = f(x_t, x0): every block once, in order.
  torch::Tensor iterate(const torch::Tensor& x, const std::vector<torch::Tensor>& recall, const Positions& p);

  ModelConfig config_;
  bool mixed_precision_ = false;
};
TORCH_MODULE(LoopedTransformer);

// ---------------------------------------------------------------------------------------------
// Running the model: the one way inputs become states, iteration after iteration.
//
// A Loop is a batch prepared for iteration: the positions and windows of its grid, x0 =
// projection(input) and every block's recall term Wh x0, each computed once (Wh x0 is the same
// in every iteration: one of the block's d x d products per iteration saved, in the backward
// pass too; the paper's code recomputes it). step() is one iteration x_{t+1} = f(x_t, x0), run()
// iterates and hands the caller every state (and, on request, its logits). Gradients follow
// LibTorch's mode, as any module call: with gradient by default, none under NoGradGuard or
// InferenceMode. x0 and Wh x0 are made in the constructor, so the mode there decides whether
// the projection and Wh get gradients (a Loop made under NoGradGuard gives them none; one made
// under InferenceMode cannot be stepped with gradient). The model must outlive its Loops. Every
// caller (training, evaluation, early exit, analysis, benchmarks) runs the
// model through this class; a faster iteration engine plugs in behind step().
class Loop {
 public:
  // input: [B, L, C_in] on any device and dtype (moved to the model's). Throws looplab::Error
  // for a shape the model cannot take.
  Loop(LoopedTransformerImpl& model, const torch::Tensor& input);
  // From x0 [B, L, d] itself: the analysis perturbs x0 and differentiates through it.
  static Loop from_x0(LoopedTransformerImpl& model, const torch::Tensor& x0);

  const torch::Tensor& x0() const { return x0_; }
  int64_t size() const { return x0_.size(0); }
  LoopedTransformerImpl& model() const { return *model_; }

  // One iteration from the state x [B, L, d].
  torch::Tensor step(const torch::Tensor& x) const;
  // The head on a state: RMSNorm -> Linear -> GELU -> Linear, [B, L, d] -> [B, L, C_out].
  torch::Tensor logits(const torch::Tensor& state) const;

  // visit(t, x_t, logits_t) after iteration t = 1..iterations; logits_t only when `with_logits`
  // (undefined otherwise).
  using Visit = std::function<void(int64_t t, const torch::Tensor& state, const torch::Tensor& logits)>;
  // `iterations` iterations from `start` (x0 when undefined); returns the last state.
  torch::Tensor run(int64_t iterations, const Visit& visit = nullptr, const torch::Tensor& start = {},
                    bool with_logits = false) const;

  // The same batch restricted to the examples `index` ([b] int64 on the model's device): early
  // exit drops the examples that have converged.
  Loop select(const torch::Tensor& index) const;

  // Recomputation in training (train/progressive_loss.cpp): a copy whose recall terms are
  // detached leaves that collect their gradients over many steps, and the way back into this
  // loop's graph: one backward pass through Wh and the projection, with `x0_grad` (if defined)
  // as the gradient reaching x0 directly.
  Loop with_recall_leaves() const;
  void backward_from_leaves(const Loop& leaves, const torch::Tensor& x0_grad) const;

 private:
  Loop(LoopedTransformerImpl& model, torch::Tensor x0, bool from_x0);
  LoopedTransformerImpl* model_;
  std::shared_ptr<const Positions> positions_;
  torch::Tensor x0_;
  std::vector<torch::Tensor> recall_;  // Wh x0 per block
};

}  // namespace looplab
