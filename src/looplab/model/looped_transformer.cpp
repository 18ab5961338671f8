#include "looplab/model/looped_transformer.h"

#include "looplab/platform/runtime.h"

#include <cmath>
#include <limits>

#include "looplab/model/engine/engine.h"
#include "looplab/util/error.h"

namespace looplab {

torch::Tensor AtenLinearImpl::forward(const torch::Tensor& x) {
  if (mixed_linear_applies(x, weight)) return mixed_linear(x, weight, bias);
  return at::linear(x, weight, bias);
}

// ---------------------------------------------------------------------------------------------
// RMSNorm

namespace {

double machine_epsilon(torch::ScalarType t) {
  switch (t) {
    case torch::kFloat64: return std::numeric_limits<double>::epsilon();
    case torch::kFloat16: return 0.0009765625;  // 2^-10
    case torch::kBFloat16: return 0.0078125;    // 2^-7
    default: return std::numeric_limits<float>::epsilon();
  }
}

}  // namespace

torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight) {
  const double eps = machine_epsilon(x.scalar_type());
  // Half-precision inputs are normalized in float32, as PyTorch does, then cast back.
  const bool reduced = x.scalar_type() == torch::kFloat16 || x.scalar_type() == torch::kBFloat16;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  // One operator instead of six (issue 47: on a GPU each is a kernel): the same formula, the
  // same result bit for bit on the CPU in float32 and float64, twice differentiable.
  if (!reduced && weight.scalar_type() == x.scalar_type()) return at::rms_norm(x, {x.size(-1)}, weight, eps);
#endif
  const torch::Tensor xf = reduced ? x.to(torch::kFloat32) : x;
  const torch::Tensor y = xf * torch::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return reduced ? (y * weight.to(torch::kFloat32)).to(x.scalar_type()) : y * weight;
}

RMSNormImpl::RMSNormImpl(int64_t dim) { weight = register_parameter("weight", torch::ones({dim})); }

// ---------------------------------------------------------------------------------------------
// Positions: N-D RoPE and neighbourhood windows

namespace {

// Row-major coordinates [L, n] of every token of a grid.
std::vector<std::vector<int64_t>> grid_coordinates(const std::vector<int64_t>& grid) {
  int64_t total = 1;
  for (int64_t g : grid) total *= g;
  std::vector<std::vector<int64_t>> coords(total, std::vector<int64_t>(grid.size()));
  for (int64_t i = 0; i < total; ++i) {
    int64_t rest = i;
    for (int64_t a = static_cast<int64_t>(grid.size()) - 1; a >= 0; --a) {
      coords[i][a] = rest % grid[a];
      rest /= grid[a];
    }
  }
  return coords;
}

}  // namespace

torch::Tensor rope_angles(const std::vector<int64_t>& grid, int64_t head_dim, double base) {
  const int64_t n = static_cast<int64_t>(grid.size());
  const int64_t k_max = head_dim / (2 * n);
  const auto coords = grid_coordinates(grid);
  torch::Tensor angles = torch::empty({static_cast<int64_t>(coords.size()), n * k_max}, torch::kFloat64);
  auto a = angles.accessor<double, 2>();
  for (size_t i = 0; i < coords.size(); ++i)
    for (int64_t axis = 0; axis < n; ++axis)
      for (int64_t k = 0; k < k_max; ++k)
        a[i][axis * k_max + k] =
            static_cast<double>(coords[i][axis]) * std::pow(base, -static_cast<double>(k) / k_max);
  return angles;
}

torch::Tensor apply_rope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  auto sizes = x.sizes().vec();
  sizes.back() /= 2;
  sizes.push_back(2);
  const torch::Tensor pairs = x.reshape(sizes);
  const torch::Tensor re = pairs.select(-1, 0), im = pairs.select(-1, 1);
  return torch::stack({re * cos - im * sin, re * sin + im * cos}, -1).flatten(-2);
}

torch::Tensor apply_rope_pairs(const torch::Tensor& x, const torch::Tensor& pair_cos, const torch::Tensor& pair_sin) {
  auto sizes = x.sizes().vec();
  sizes.back() /= 2;
  sizes.push_back(2);
  const torch::Tensor swapped = x.reshape(sizes).flip(-1).view(x.sizes());
  return x * pair_cos + swapped * pair_sin;
}

torch::Tensor neighbourhood_index(const std::vector<int64_t>& grid, int64_t window) {
  const auto coords = grid_coordinates(grid);
  const int64_t n = static_cast<int64_t>(grid.size());
  std::vector<int64_t> span(n), strides(n, 1);
  int64_t keys = 1;
  for (int64_t a = 0; a < n; ++a) {
    span[a] = std::min(window, grid[a]);
    keys *= span[a];
  }
  for (int64_t a = n - 2; a >= 0; --a) strides[a] = strides[a + 1] * grid[a + 1];
  torch::Tensor index = torch::empty({static_cast<int64_t>(coords.size()), keys}, torch::kInt64);
  auto idx = index.accessor<int64_t, 2>();
  for (size_t i = 0; i < coords.size(); ++i) {
    std::vector<int64_t> start(n);
    for (int64_t a = 0; a < n; ++a)
      start[a] = std::clamp<int64_t>(coords[i][a] - window / 2, 0, grid[a] - span[a]);
    // Enumerate the window's keys in row-major order.
    for (int64_t j = 0; j < keys; ++j) {
      int64_t rest = j, flat = 0;
      for (int64_t a = n - 1; a >= 0; --a) {
        flat += (start[a] + rest % span[a]) * strides[a];
        rest /= span[a];
      }
      idx[i][j] = flat;
    }
  }
  return index;
}

// ---------------------------------------------------------------------------------------------
// Attention

AttentionImpl::AttentionImpl(const ModelConfig& c) : heads(c.heads) {
  qkv = register_module("qkv", AtenLinear(c.width, 3 * c.width));
  out_proj = register_module("out_proj", AtenLinear(c.width, c.width));
  q_norm = register_module("q_norm", RMSNorm(c.head_dim()));
  k_norm = register_module("k_norm", RMSNorm(c.head_dim()));
}

torch::Tensor AttentionImpl::forward(const torch::Tensor& u, const Positions& p) {
  const int64_t B = u.size(0), L = u.size(1), d = u.size(2), hd = d / heads;
  // [B, L, 3d] -> three [B, heads, L, head_dim]; q and k rotated together (one set of operators).
  auto split = qkv(u).view({B, L, 3, heads, hd}).permute({2, 0, 3, 1, 4});
  const torch::Tensor qk = apply_rope_pairs(split.narrow(0, 0, 2), p.pair_cos, p.pair_sin);
  torch::Tensor q = q_norm(qk[0]);
  torch::Tensor k = k_norm(qk[1]);
  torch::Tensor v = split[2];
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  [[maybe_unused]] const bool twice = plain_engine_scope();  // LibTorch 1.13 has no SDPA

  torch::Tensor out;
  if (p.window_bias.defined()) {
    // Neighbourhood attention on a short sequence: a dense product with the window as a mask,
    // as one operator (fused kernels) where it need not be differentiated twice.
#if TORCH_VERSION_MAJOR >= 2
    if (!twice)
      out = at::scaled_dot_product_attention(
          q, k, v, p.window_bias.scalar_type() == q.scalar_type() ? p.window_bias : p.window_bias.to(q.scalar_type()));
    else
#endif
      out = torch::matmul(torch::softmax(torch::matmul(q, k.transpose(-1, -2)) * scale + p.window_bias, -1), v);
  } else if (p.window.defined()) {
    // Gather each query's W keys and values: [B, heads, L, W, head_dim].
    const int64_t W = p.window.size(1);
    const torch::Tensor flat = p.window.reshape({-1});
    const torch::Tensor kw = k.index_select(2, flat).view({B, heads, L, W, hd});
    const torch::Tensor vw = v.index_select(2, flat).view({B, heads, L, W, hd});
    const torch::Tensor scores = torch::matmul(q.unsqueeze(3), kw.transpose(-1, -2)) * scale;  // [B,h,L,1,W]
    out = torch::matmul(torch::softmax(scores, -1), vw).squeeze(3);
  } else {
#if TORCH_VERSION_MAJOR >= 2
    if (!twice) {
      out = at::scaled_dot_product_attention(q, k, v);  // same 1/sqrt(head_dim) scale, fused kernels
    } else {
      out = torch::matmul(torch::softmax(torch::matmul(q, k.transpose(-1, -2)) * scale, -1), v);
    }
#else
    out = torch::matmul(torch::softmax(torch::matmul(q, k.transpose(-1, -2)) * scale, -1), v);
#endif
  }
  return out_proj(out.transpose(1, 2).reshape({B, L, d}));
}

// ---------------------------------------------------------------------------------------------
// Block

BlockImpl::BlockImpl(const ModelConfig& c) : recall_kind(c.recall), norm_kind(c.norm) {
  const int64_t d = c.width;
  attn = register_module("attn", Attention(c));
  mlp = register_module("mlp", torch::nn::Sequential(AtenLinear(d, c.mlp_ratio * d), torch::nn::GELU(),
                                                     AtenLinear(c.mlp_ratio * d, d)));
  if (c.recall == Recall::kExternal || c.recall == Recall::kInternal) {
    Wx = register_module("Wx", AtenLinear(d, d));
    Wh = register_module("Wh", AtenLinear(d, d));
  }
  if (c.norm == Norm::kPre || c.norm == Norm::kPeri || c.norm == Norm::kGru)
    pre_norm_func = register_module("pre_norm_func", RMSNorm(d));
  if (c.norm == Norm::kPeri || c.norm == Norm::kGru) peri_norm_func = register_module("peri_norm_func", RMSNorm(d));
  if (c.norm == Norm::kPost) post_norm_func = register_module("post_norm_func", RMSNorm(d));
  if (c.norm == Norm::kGru) gru = register_module("gru", torch::nn::GRUCell(torch::nn::GRUCellOptions(d, d)));
}

torch::Tensor BlockImpl::recall_input(const torch::Tensor& x0) { return Wh ? Wh(x0) : torch::Tensor(); }

torch::Tensor BlockImpl::recall(const torch::Tensor& x, const torch::Tensor& wh_x0) { return Wx(x) + wh_x0; }

// u = preN(r); internal recall: u = g(u, x0); y = periN(S(u)); out = postN(Res(r, y)).
torch::Tensor BlockImpl::sublayer_step(const torch::Tensor& r, const torch::Tensor& wh_x0, const Positions& p,
                                       bool attention) {
  torch::Tensor u = pre_norm_func ? pre_norm_func(r) : r;
  if (recall_kind == Recall::kInternal) u = recall(u, wh_x0);
  torch::Tensor y = attention ? attn(u, p) : mlp->forward(u);
  if (peri_norm_func) y = peri_norm_func(y);
  torch::Tensor out;
  if (gru) {
    // GRUCell(input = y, hidden = r), token by token.
    const int64_t d = r.size(-1);
    out = gru(y.reshape({-1, d}), r.reshape({-1, d})).view(r.sizes());
  } else {
    out = r + y;
  }
  return post_norm_func ? post_norm_func(out) : out;
}

torch::Tensor BlockImpl::forward(const torch::Tensor& x, const torch::Tensor& wh_x0, const Positions& p) {
  // Without gradient on the CPU: the same block in a few fused passes (model/engine/engine.h).
  if (fused_block_applies(*this, x, p)) return fused_block_forward(*this, x, wh_x0, p);
  const torch::Tensor r = recall_kind == Recall::kExternal ? recall(x, wh_x0) : x;
  const torch::Tensor z = sublayer_step(r, wh_x0, p, /*attention=*/true);
  return sublayer_step(z, wh_x0, p, /*attention=*/false);
}

// ---------------------------------------------------------------------------------------------
// The looped model

LoopedTransformerImpl::LoopedTransformerImpl(const ModelConfig& config) : config_(config) {
  validate(config_);
  const int64_t d = config_.width;
  projection = register_module("projection", AtenLinear(config_.in_channels, d));
  recur_blocks = register_module("recur_blocks", torch::nn::ModuleList());
  for (int64_t i = 0; i < config_.blocks; ++i) recur_blocks->push_back(Block(config_));
  head = register_module("head", torch::nn::Sequential(RMSNorm(d), AtenLinear(d, d), torch::nn::GELU(),
                                                       AtenLinear(d, config_.out_channels)));
  // Registered last, so that a model without it keeps the same parameter order.
  if (config_.halt_head) halt = register_module("halt", AtenLinear(d, 1));
}

std::vector<int64_t> LoopedTransformerImpl::grid_for(int64_t positions) const {
  return looplab::grid_for(config_, positions);
}

Positions LoopedTransformerImpl::positions(const std::vector<int64_t>& grid) const {
  const auto on_model = torch::TensorOptions().device(device()).dtype(dtype());
  Positions p;
  p.grid = grid;
  const torch::Tensor angles = rope_angles(grid, config_.head_dim(), config_.rope_base);
  p.cos = angles.cos().to(on_model);
  p.sin = angles.sin().to(on_model);
  p.pair_cos = torch::stack({p.cos, p.cos}, -1).flatten(-2);
  p.pair_sin = torch::stack({-p.sin, p.sin}, -1).flatten(-2);
  if (config_.neighbourhood_attention) {
    const torch::Tensor index = neighbourhood_index(grid, config_.window);
    p.keys = index;
    const int64_t L = index.size(0), keys = index.size(1);
    // Dense masked scores cost L^2 per head against L x keys for the gathered windows, but run
    // as a few large matrix products: faster (measured ~1.5x for the whole block at 32 bits,
    // docs/performance.md) while L is within a small multiple of the window.
    if (L <= kDenseWindowFactor * keys) {
      p.window_bias = torch::full({L, L}, -std::numeric_limits<double>::infinity(), on_model);
      p.window_bias.scatter_(1, index.to(device()), 0.0);
    } else {
      p.window = index.to(device());
    }
  } else if (p.cos.size(0) <= kMaxFusedKeys) {
    // Full attention, as the fused block runs it: every query sees every position.
    const int64_t L = p.cos.size(0);
    p.keys = torch::arange(L, torch::kInt64).expand({L, L}).contiguous();
  }
  return p;
}


std::vector<torch::Tensor> LoopedTransformerImpl::recall_input(const torch::Tensor& x0) {
  std::vector<torch::Tensor> r;
  for (const auto& block : *recur_blocks) r.push_back(block->as<BlockImpl>()->recall_input(x0));
  return r;
}

torch::Tensor LoopedTransformerImpl::iterate(const torch::Tensor& x, const std::vector<torch::Tensor>& r,
                                             const Positions& p) {
  torch::Tensor state = x;
  for (size_t i = 0; i < r.size(); ++i) state = (*recur_blocks)[i]->as<BlockImpl>()->forward(state, r[i], p);
  return state;
}

LoopedTransformerImpl::Output LoopedTransformerImpl::forward(const torch::Tensor& input, int64_t iterations) {
  const Loop loop(*this, input);
  const torch::Tensor x = loop.run(iterations);
  return {loop.logits(x), x};
}

// ---------------------------------------------------------------------------------------------
// Loop

Loop::Loop(LoopedTransformerImpl& model, torch::Tensor x0, bool /*from_x0*/)
    : model_(&model),
      positions_(std::make_shared<const Positions>(model.positions(model.grid_for(x0.size(1))))),
      x0_(std::move(x0)) {
  const AutocastScope mixed(model.device(), model.mixed_precision());
  recall_ = model.recall_input(x0_);
}

namespace {

const torch::Tensor& checked_input(const LoopedTransformerImpl& model, const torch::Tensor& input) {
  const int64_t c = model.config().in_channels;
  if (input.dim() != 3 || input.size(2) != c)
    throw Error("input must have shape [batch, positions, " + std::to_string(c) + "], got " + c10::str(input.sizes()));
  return input;
}

// x0 = projection(input), under the model's precision.
torch::Tensor project(LoopedTransformerImpl& model, const torch::Tensor& input) {
  const AutocastScope mixed(model.device(), model.mixed_precision());
  return model.projection(checked_input(model, input).to(model.device(), model.dtype()));
}

}  // namespace

Loop::Loop(LoopedTransformerImpl& model, const torch::Tensor& input) : Loop(model, project(model, input), true) {}

Loop Loop::from_x0(LoopedTransformerImpl& model, const torch::Tensor& x0) { return Loop(model, x0, true); }

torch::Tensor Loop::step(const torch::Tensor& x) const {
  const AutocastScope mixed(model_->device(), model_->mixed_precision());
  return model_->iterate(x, recall_, *positions_);
}

torch::Tensor LoopedTransformerImpl::halt_logits(const torch::Tensor& state) {
  if (!halt) throw Error("this model has no halting head (train it with --halt-head)");
  // In the weights' dtype, outside autocast: one d-vector per example.
  return halt->forward(state.to(dtype()).mean(1)).squeeze(-1);  // [B, L, d] -> [B, d] -> [B]
}

torch::Tensor Loop::logits(const torch::Tensor& state) const {
  if (!model_->mixed_precision()) return model_->head->forward(state);
  torch::Tensor out;
  {
    const AutocastScope mixed(model_->device(), true);
    out = model_->head->forward(state);
  }
  return out.to(model_->dtype());
}

torch::Tensor Loop::run(int64_t iterations, const Visit& visit, const torch::Tensor& start, bool with_logits) const {
  torch::Tensor x = start.defined() ? start : x0_;
  for (int64_t t = 1; t <= iterations; ++t) {
    x = step(x);
    if (visit) visit(t, x, with_logits ? logits(x) : torch::Tensor());
  }
  return x;
}

Loop Loop::select(const torch::Tensor& index) const {
  Loop out = *this;
  out.x0_ = x0_.index_select(0, index);
  for (torch::Tensor& r : out.recall_)
    if (r.defined()) r = r.index_select(0, index);
  return out;
}

Loop Loop::with_recall_leaves() const {
  Loop out = *this;
  out.x0_ = x0_.detach();
  for (torch::Tensor& r : out.recall_)
    if (r.defined()) r = r.detach().requires_grad_(true);
  return out;
}

void Loop::backward_from_leaves(const Loop& leaves, const torch::Tensor& x0_grad) const {
  if (leaves.model_ != model_ || leaves.recall_.size() != recall_.size())
    throw Error("backward_from_leaves: the leaves of another loop");
  std::vector<torch::Tensor> outputs, grads;
  for (size_t i = 0; i < recall_.size(); ++i)
    if (recall_[i].defined() && leaves.recall_[i].grad().defined()) {
      outputs.push_back(recall_[i]);
      grads.push_back(leaves.recall_[i].grad());
    }
  if (x0_grad.defined()) {
    outputs.push_back(x0_);
    grads.push_back(x0_grad);
  }
  if (!outputs.empty()) torch::autograd::backward(outputs, grads);
}

}  // namespace looplab
