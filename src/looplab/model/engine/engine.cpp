#include "looplab/model/engine/engine.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "looplab/model/engine/block.h"
#include "looplab/model/engine/products.h"
#include "looplab/platform/blas_kernel.h"
#include "looplab/model/looped_transformer.h"
#include "looplab/platform/runtime.h"
#include "looplab/util/error.h"

namespace looplab {

using namespace engine;

static_assert(kMaxWindow == kMaxFusedKeys, "the fused engine's window limit is the Positions' keys limit");

// ---------------------------------------------------------------------------------------------
// Choosing the engine

namespace {
thread_local int plain_scopes = 0;
}  // namespace

bool plain_engine() {
  static const bool off = [] {
    const char* e = std::getenv("LOOPLAB_ENGINE");
    if (e && *e && std::strcmp(e, "plain") != 0)  // "plain" is its one value; a chess engine's path was another's
      std::fprintf(stderr, "LOOPLAB_ENGINE='%s' ignored: its one value is 'plain' (the chess engine's path is LOOPLAB_STOCKFISH)\n", e);
    return e && std::strcmp(e, "plain") == 0;
  }();
  return off || plain_scopes > 0;
}

bool plain_engine_scope() { return plain_scopes > 0; }

PlainEngine::PlainEngine() { ++plain_scopes; }
PlainEngine::~PlainEngine() { --plain_scopes; }

std::string EngineChoice::describe() const { return fused ? "fused" : "plain (" + reason + ")"; }

namespace {

// The allow-list: what the fused engine implements. A value not listed (a new norm or recall)
// runs on the plain engine until the fused one implements it (and -Wswitch says so).
bool implements(Norm n) {
  switch (n) {
    case Norm::kPre:
    case Norm::kPeri:
    case Norm::kPost:
      return true;
    case Norm::kGru:
      return false;
  }
  return false;
}

bool implements(Recall r) {
  switch (r) {
    case Recall::kNone:
    case Recall::kExternal:
    case Recall::kInternal:
    case Recall::kFixed:
      return true;
  }
  return false;
}

// A block as the choice sees it.
struct BlockKind {
  Recall recall;
  Norm norm;
  int64_t width, heads;
  int64_t keys;       // keys per query; -1 for full attention beyond kMaxFusedKeys tokens
  bool cpu;
  std::string dtype;  // the parameters' and the state's
  bool autocast;      // bf16-mixed: bfloat16 products (products.h) over float32 weights and state
};

// Why the fused engine does not run such a block, or "" where it does.
std::string declines(const BlockKind& k) {
  if (plain_engine()) return "LOOPLAB_ENGINE=plain or a PlainEngine scope";
  if (!k.cpu) return "not on the CPU";
  if (k.dtype != "float32" && k.dtype != "float64") return k.dtype + " parameters";
  if (k.autocast && k.dtype != "float32") return "bf16-mixed over " + k.dtype + " parameters";
  if (!implements(k.norm)) return "the " + to_string(k.norm) + " norm";
  if (!implements(k.recall)) return to_string(k.recall) + " recall";
  if (k.width > kMaxWidth) return "width over " + std::to_string(kMaxWidth);
  if (k.heads > kMaxHeads) return "more than " + std::to_string(kMaxHeads) + " heads";
  if (k.keys < 0) return "full attention over more than " + std::to_string(kMaxFusedKeys) + " tokens";
  if (k.keys > kMaxWindow) return "more than " + std::to_string(kMaxWindow) + " keys per query";
  return "";
}

}  // namespace

EngineChoice engine_for(const ModelConfig& c, const std::string& device, const std::string& dtype,
                        const std::string& precision) {
  int64_t keys = 1, tokens = 1;
  for (int64_t n : c.grid) {
    keys *= std::min(n, c.window);
    tokens *= n;
  }
  if (!c.neighbourhood_attention) keys = tokens <= kMaxFusedKeys ? tokens : -1;
  const std::string why = declines({c.recall, c.norm, c.width, c.heads, keys, device == "cpu", dtype,
                                    is_mixed_precision(precision)});
  return {why.empty(), why};
}

bool fused_block_applies(const BlockImpl& block, const torch::Tensor& x, const Positions& p) {
  // The call itself first (no strings on this path, run once per block call): a batch of
  // sequences and every tensor of the state's dtype (a PlainEngine scope is in `declines`).
  const auto t = x.scalar_type();
  if (x.dim() != 3 || block.attn->qkv->weight.scalar_type() != t ||
      p.cos.scalar_type() != t || (t != torch::kFloat32 && t != torch::kFloat64))
    return false;
  const BlockKind kind{block.recall_kind, block.norm_kind, x.dim() == 3 ? x.size(2) : 0, block.attn->heads,
                       p.keys.defined() ? p.keys.size(1) : -1, x.device().is_cpu(), dtype_name(x.scalar_type()),
                       autocast_enabled(c10::DeviceType::CPU)};
  return declines(kind).empty();
}

// ---------------------------------------------------------------------------------------------
// The block's tensors by slot, and the autograd node

namespace {

const torch::nn::LinearImpl& linear_at(const torch::nn::Sequential& s, size_t i) {
  return *s->ptr(i)->as<torch::nn::LinearImpl>();
}

Slots slots_of(const BlockImpl& b, const torch::Tensor& x, const torch::Tensor& wh_x0) {
  Slots s;
  s[kX] = x;
  if (b.recall_kind == Recall::kExternal || b.recall_kind == Recall::kInternal) {
    s[kWh] = wh_x0;
    s[kWxW] = b.Wx->weight, s[kWxB] = b.Wx->bias;
  }
  s[kQkvW] = b.attn->qkv->weight, s[kQkvB] = b.attn->qkv->bias;
  s[kQNorm] = b.attn->q_norm->weight, s[kKNorm] = b.attn->k_norm->weight;
  s[kOutW] = b.attn->out_proj->weight, s[kOutB] = b.attn->out_proj->bias;
  const auto &fc1 = linear_at(b.mlp, 0), &fc2 = linear_at(b.mlp, 2);
  s[kFc1W] = fc1.weight, s[kFc1B] = fc1.bias, s[kFc2W] = fc2.weight, s[kFc2B] = fc2.bias;
  if (b.pre_norm_func) s[kPreW] = b.pre_norm_func->weight;
  if (b.peri_norm_func) s[kPeriW] = b.peri_norm_func->weight;
  if (b.post_norm_func) s[kPostW] = b.post_norm_func->weight;
  return s;
}

struct FusedBlockFunction : torch::autograd::Function<FusedBlockFunction> {
  // inputs: the defined slots in slot order (autograd links each to its gradient).
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::TensorList inputs, const Slots* slots,
                               const Shape* shape, const Positions* p) {
    Saved saved;
    const torch::Tensor out = inputs[0].scalar_type() == torch::kFloat64
                                  ? forward_rows<double>(*slots, *shape, *p, &saved)
                                  : forward_rows<float>(*slots, *shape, *p, &saved);
    ctx->save_for_backward(inputs.vec());
    std::vector<int64_t> present;
    for (int i = 0; i < kSlots; ++i)
      if ((*slots)[i].defined()) present.push_back(i);
    ctx->saved_data["slots"] = present;
    ctx->saved_data["shape"] = std::vector<int64_t>{shape->B, shape->L, shape->d, shape->heads,
                                                    int64_t{shape->external}, int64_t{shape->internal},
                                                    int64_t{shape->bf16}};
    ctx->saved_data["cos"] = p->cos;
    ctx->saved_data["sin"] = p->sin;
    ctx->saved_data["keys"] = p->keys;
    for (const SavedPiece& piece : saved_pieces())
      if (piece.of(saved).defined()) ctx->saved_data[piece.name] = piece.of(saved);
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    if (torch::GradMode::is_enabled())
      throw Error("the fused engine's backward is not differentiable: build graphs for double backward inside a "
                  "PlainEngine scope (model/engine/engine.h)");
    const auto inputs = ctx->get_saved_variables();
    const auto present = ctx->saved_data["slots"].toIntVector();
    const auto s = ctx->saved_data["shape"].toIntVector();
    const Shape shape{s[0], s[1], s[2], s[3], s[4] != 0, s[5] != 0, s[6] != 0};
    Slots slots;
    for (size_t i = 0; i < present.size(); ++i) slots[present[i]] = inputs[i];
    Saved saved;
    for (const SavedPiece& piece : saved_pieces()) {
      auto it = ctx->saved_data.find(piece.name);
      if (it != ctx->saved_data.end()) piece.of(saved) = it->second.toTensor();
    }
    Positions p;
    p.cos = ctx->saved_data["cos"].toTensor();
    p.sin = ctx->saved_data["sin"].toTensor();
    p.keys = ctx->saved_data["keys"].toTensor();
    const torch::Tensor dout = grads[0].defined() ? grads[0] : torch::zeros_like(inputs[0]);
    const bool need_dx = ctx->needs_input_grad(0);
    const Slots g = inputs[0].scalar_type() == torch::kFloat64
                        ? backward_rows<double>(slots, shape, p, saved, dout, need_dx)
                        : backward_rows<float>(slots, shape, p, saved, dout, need_dx);
    torch::autograd::variable_list out;
    for (int64_t slot : present) out.push_back(g[slot]);
    out.resize(out.size() + 3);  // none for forward's three other arguments
    return out;
  }
};

}  // namespace

torch::Tensor fused_block_forward(const BlockImpl& b, const torch::Tensor& x, const torch::Tensor& wh_x0,
                                  const Positions& p) {
  const Slots slots = slots_of(b, x, wh_x0);
  const Shape shape{x.size(0), x.size(1), x.size(2), b.attn->heads, b.recall_kind == Recall::kExternal,
                    b.recall_kind == Recall::kInternal,
                    x.scalar_type() == torch::kFloat32 && autocast_enabled(c10::DeviceType::CPU)};
  bool record = false;
  if (torch::GradMode::is_enabled())
    for (const torch::Tensor& t : slots) record = record || (t.defined() && t.requires_grad());
  if (!record) {
    const bool f64 = x.scalar_type() == torch::kFloat64;
    if (const int64_t per_tile = sequences_per_tile(shape.B, shape.L))
      return f64 ? forward_tiles<double>(slots, shape, p, per_tile) : forward_tiles<float>(slots, shape, p, per_tile);
    return f64 ? forward_rows<double>(slots, shape, p, nullptr) : forward_rows<float>(slots, shape, p, nullptr);
  }
  std::vector<torch::Tensor> inputs;
  for (const torch::Tensor& t : slots)
    if (t.defined()) inputs.push_back(t);
  return FusedBlockFunction::apply(torch::TensorList(inputs), &slots, &shape, &p);
}

// ---------------------------------------------------------------------------------------------
// The model's other Linear layers under bf16-mixed

std::string bf16_mixed_on_this_cpu() {
  const CpuFeatures f = cpu_features();
  if (!bf16_mixed_supported(torch::kCPU))
    return "no: this CPU has neither AVX512-BF16 nor AMX, so bfloat16 products would be emulated, slower than "
           "float32; float32 stays the default (the paper preset trains in float32 here)";
  return std::string("yes: bfloat16 products on ") + (f.amx ? "AMX" : "AVX512-BF16") + " through " +
         engine::bf16_products_library() + ", float32 accumulation; the paper preset's default";
}

bool mixed_linear_applies(const torch::Tensor& x, const torch::Tensor& W) {
  return x.is_cpu() && x.scalar_type() == torch::kFloat32 && W.scalar_type() == torch::kFloat32 &&
         autocast_enabled(c10::DeviceType::CPU) && !plain_engine();
}

namespace {

struct MixedLinearFunction : torch::autograd::Function<MixedLinearFunction> {
  // x [N, K] float32, W [M, K], b [M] or undefined -> [N, M] float32.
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& W,
                               const torch::Tensor& b) {
    const torch::Tensor x16 = x.to(torch::kBFloat16);
    ctx->save_for_backward({x16, W});
    ctx->saved_data["bias"] = b.defined();
    return engine::linear(x16, W, b);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    if (torch::GradMode::is_enabled())
      throw Error("the bf16-mixed Linear's backward is not differentiable: build graphs for double backward inside "
                  "a PlainEngine scope (model/engine/engine.h)");
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& dy = grads[0];
    const torch::Tensor g = dy.to(torch::kBFloat16);
    torch::Tensor dx, dW, db;
    if (ctx->needs_input_grad(0)) dx = engine::input_gradient(g, saved[1]);
    if (ctx->needs_input_grad(1)) dW = engine::weight_gradient(g, saved[0]);
    if (ctx->saved_data["bias"].toBool() && ctx->needs_input_grad(2)) db = dy.sum(0);
    return {dx, dW, db};
  }
};

}  // namespace

torch::Tensor mixed_linear(const torch::Tensor& x, const torch::Tensor& W, const torch::Tensor& b) {
  auto sizes = x.sizes().vec();
  sizes.back() = W.size(0);
  const torch::Tensor flat = x.reshape({-1, x.size(-1)});
  return MixedLinearFunction::apply(flat, W, b).view(sizes);
}

}  // namespace looplab
