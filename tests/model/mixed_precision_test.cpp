// bf16-mixed (runtime.h, LoopedTransformerImpl::set_mixed_precision): bfloat16 products over
// float32 weights, on the CPU's fused engine (model/engine/products.h) and on the plain engine
// under autocast, checked against the float64 reference vectors, against float64 references
// written out here, and against float32 training.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <tuple>

#include "looplab/io/tensor_io.h"
#include "looplab/model/engine/engine.h"
#include "looplab/model/engine/kernels.h"
#include "looplab/model/engine/products.h"
#include "looplab/model/looped_transformer.h"
#include "looplab/run/model_folder.h"
#include "looplab/platform/runtime.h"
#include "looplab/train/adamw.h"
#include "looplab/train/progressive_loss.h"
#include "looplab/platform/blas_kernel.h"
#include "vectors.h"

namespace looplab {
namespace {

using vectors::kDir;
using vectors::Vector;

// The four reference models with float32 weights and bfloat16 products. Autocast rounds each
// product's inputs to bfloat16 (2^-9 relative) and keeps float32 elsewhere, so the outputs land
// within the whole-bfloat16 bound (vectors.h), and measurably off float32's (1e-5): a run
// where autocast did not act (the fused block ignoring it, say) would sit at 1e-6.
TEST(MixedPrecision, VectorsOnTheCpu) {
  for (const Vector& v : vectors::load_index()) {
    LoopedTransformer model(v.config);
    load_weights(*model, kDir + "/" + v.name + ".weights.safetensors");
    model->set_mixed_precision(true);
    const auto io = read_tensors(kDir + "/" + v.name + ".io.safetensors");
    torch::NoGradGuard no_grad;
    const auto out = model->forward(io.at("input"), v.iterations);
    EXPECT_EQ(out.logits.scalar_type(), torch::kFloat32) << v.name << ": logits come back in float32";
    for (const auto& [name, got] : {std::pair{"state", out.state}, std::pair{"logits", out.logits}}) {
      const double rel = vectors::expect_close(got, io.at(name), vectors::kBfloat16VectorTolerance,
                                               v.name + " " + name + " (bf16-mixed)", /*print=*/true);
      EXPECT_GT(rel, 1e-4) << v.name << " " << name << ": as close as float32, so the products were not in bfloat16";
    }
    EXPECT_EQ(model->projection->weight.scalar_type(), torch::kFloat32);
  }
  EXPECT_FALSE(autocast_enabled(c10::DeviceType::CPU)) << "the scope is left as it was found";
}

// A training step under bf16-mixed: float32 gradients on float32 weights, within bfloat16's
// reach of the float32 step's, on the fused engine and on the plain engine's autocast (which
// round differently: they must differ).
TEST(MixedPrecision, TrainingStepNearFloat32) {
  ModelConfig c = default_config("prefix-sums", Recall::kExternal, Norm::kPost, 64);
  c.heads = 4;
  torch::manual_seed(7);
  const torch::Tensor input = torch::randint(0, 2, {8, 32, 1}).to(torch::kFloat32) - 0.5;
  const torch::Tensor target = torch::randint(0, 2, {8, 32});
  auto step = [&](bool mixed, bool plain) {
    torch::manual_seed(1);
    LoopedTransformer model(c);
    model->set_mixed_precision(mixed);
    std::optional<PlainEngine> scope;
    if (plain) scope.emplace();
    const LossResult r = progressive_backward(*model, input, target, 2, 3, 1.0, false);
    std::vector<torch::Tensor> grads;
    for (const auto& p : model->parameters()) {
      EXPECT_EQ(p.grad().scalar_type(), torch::kFloat32);
      grads.push_back(p.grad().flatten());
    }
    return std::pair{r.loss, torch::cat(grads)};
  };
  const auto [loss32, grad32] = step(false, false);
  const auto [loss_mixed, grad_mixed] = step(true, false);
  const auto [loss_mixed_plain, grad_mixed_plain] = step(true, true);
  EXPECT_NEAR(loss_mixed, loss32, 0.02 * loss32);
  const double rel = ((grad_mixed - grad32).norm() / grad32.norm()).item<double>();
  EXPECT_LT(rel, 0.05) << "bf16-mixed gradient against float32's";
  EXPECT_GT(rel, 1e-4) << "bf16-mixed gradient equal to float32's: autocast did not act";
  const double plain_rel = ((grad_mixed_plain - grad32).norm() / grad32.norm()).item<double>();
  EXPECT_LT(plain_rel, 0.05) << "autocast's gradient against float32's";
  EXPECT_FALSE(torch::equal(grad_mixed, grad_mixed_plain)) << "the fused engine did not run bf16-mixed";
}

// Beyond 8 windows the neighbourhood attention gathers its keys (the fused engine declines
// under autocast): the output stays within bfloat16's reach of float32's.
TEST(MixedPrecision, LongSequencesGatherTheirWindows) {
  ModelConfig c = default_config("prefix-sums", Recall::kExternal, Norm::kPost, 32);
  c.heads = 4;
  torch::manual_seed(3);
  LoopedTransformer model(c);
  const torch::Tensor input = torch::randint(0, 2, {2, 100, 1}).to(torch::kFloat32) - 0.5;
  torch::InferenceMode inference;
  const torch::Tensor f32 = model->forward(input, 4).logits;
  model->set_mixed_precision(true);
  const torch::Tensor mixed = model->forward(input, 4).logits;
  const double rel = ((mixed - f32).abs().max() / f32.abs().max()).item<double>();
  EXPECT_LT(rel, 0.05);
  EXPECT_GT(rel, 1e-5);
}

// ---------------------------------------------------------------------------------------------
// The fused engine's bf16-mixed (issue 47): its products, its weight copies, and the model's
// forward and gradients against float64 references.

#define SKIP_WITHOUT_BF16()                                                                    \
  if (!bf16_mixed_supported(torch::kCPU))                                                      \
  GTEST_SKIP() << "this CPU has neither AVX512-BF16 nor AMX: bf16-mixed is refused here, and " \
                  "its products would be emulated"

// x rounded to bfloat16 as the engine rounds (from float32, to nearest, ties to even), in float64.
torch::Tensor round16(const torch::Tensor& x) {
  return x.to(torch::kFloat32).to(torch::kBFloat16).to(torch::kFloat64);
}

// The bound on a product of bfloat16 operands accumulated in float32 (Higham, "Accuracy and
// Stability of Numerical Algorithms", 3.1): the product of two bfloat16 values (8 significant
// bits each) is exact in float32 (24), and n float32 additions in any order and blocking err by
// at most gamma_n = n u / (1 - n u), u = 2^-24, times the sum of the terms' magnitudes S:
// |C - C*| <= gamma_(K+1) (S + |b|) with K terms and the bias, elementwise, against C* computed
// in float64 from the same bfloat16 operands. Where the product's output is rounded to bfloat16
// before the bias is added in float32 (`rounded`: only ATen's fallback, where LibTorch has
// neither the micro-kernels nor MKL nor oneDNN: products.h), add half a bfloat16 step, at most
// 2^-8 |C| (bfloat16's unit roundoff: 8 significant bits), and one float32 rounding of the sum
// with the bias, 2^-24 (|C| + |b|): (1 + 2^-8) gamma_K S + 2^-8 |C*| + 2^-23 (|C*| + |b|).
torch::Tensor accumulation_bound(const torch::Tensor& absA, const torch::Tensor& absB, int64_t K,
                                 const torch::Tensor& abs_bias, bool rounded = false,
                                 const torch::Tensor& abs_exact = {}) {
  const double u = std::ldexp(1.0, -24);
  const double n = static_cast<double>(K + 1), gamma = n * u / (1 - n * u);
  torch::Tensor S = absA.mm(absB);
  if (!rounded) return gamma * (abs_bias.defined() ? S + abs_bias : S);
  const double half_step = std::ldexp(1.0, -8);
  torch::Tensor bound = (1 + half_step) * gamma * S + half_step * abs_exact + 2 * u * abs_exact;
  if (abs_bias.defined()) bound = bound + 2 * u * abs_bias;
  return bound;
}

// Whether this build's bf16-mixed products round their outputs (products.h: ATen's fallback only).
bool outputs_rounded() { return engine::bf16_products_library().find("rounded") != std::string::npos; }

// The largest |got - want| / bound.
double worst(const torch::Tensor& got, const torch::Tensor& want, const torch::Tensor& bound) {
  return ((got.to(torch::kFloat64) - want).abs() / bound.clamp_min(1e-300)).max().item<double>();
}

const uint16_t* bits16(const torch::Tensor& t) {
  return reinterpret_cast<const uint16_t*>(t.data_ptr<at::BFloat16>());
}

TEST(Bf16Products, WithinTheFloat32AccumulationBound) {
  SKIP_WITHOUT_BF16();
  std::printf("bf16-mixed products through %s\n", engine::bf16_products_library().c_str());
  torch::manual_seed(5);
  for (auto [m, k, n] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{{37, 256, 768}, {300, 1024, 256}, {8, 1, 64}, {129, 64, 3}}) {
    const torch::Tensor x = torch::randn({m, k}), W = torch::randn({n, k}) / std::sqrt(k), b = torch::randn({n});
    const torch::Tensor dy = torch::randn({m, n});
    const torch::Tensor x16 = x.to(torch::kBFloat16), dy16 = dy.to(torch::kBFloat16);
    const torch::Tensor xr = round16(x), Wr = round16(W), dyr = round16(dy), b64 = b.to(torch::kFloat64);
    const torch::Tensor exact = xr.mm(Wr.t()), exact_dx = dyr.mm(Wr);
    const torch::Tensor y = engine::linear(x16, W, b);
    EXPECT_EQ(y.scalar_type(), torch::kFloat32);
    const double f = worst(y, exact + b64, accumulation_bound(xr.abs(), Wr.abs().t(), k, b64.abs(), outputs_rounded(), exact.abs()));
    const double g = worst(engine::weight_gradient(dy16, x16), dyr.t().mm(xr),
                           accumulation_bound(dyr.abs().t(), xr.abs(), m, {}));
    const double h = worst(engine::input_gradient(dy16, W), exact_dx,
                           accumulation_bound(dyr.abs(), Wr.abs(), n, {}, outputs_rounded(), exact_dx.abs()));
    torch::Tensor tile = torch::empty({m, n});
    engine::tile_linear_bf16(bits16(x16), m, engine::bf16_weight(W), b, tile.data_ptr<float>());
    const double t = worst(tile, exact + b64, accumulation_bound(xr.abs(), Wr.abs().t(), k, b64.abs()));
    std::printf("%ld x %ld x %ld: error / bound %.3f (x W^T + b), %.3f (dy^T x), %.3f (dy W), %.3f (a tile's)\n",
                static_cast<long>(m), static_cast<long>(k), static_cast<long>(n), f, g, h, t);
    EXPECT_LE(f, 1.0);
    EXPECT_LE(g, 1.0);
    EXPECT_LE(h, 1.0);
    EXPECT_LE(t, 1.0);
  }
  // The engine's rounding is ATen's: to nearest, ties to even (two ties planted), infinities
  // kept, NaN quiet.
  torch::Tensor v = torch::randn({1000}) * 100;
  const uint32_t ties[] = {0x3F808000u, 0x3F818000u};
  std::memcpy(v.data_ptr<float>(), ties, sizeof ties);
  v[2] = std::numeric_limits<float>::infinity();
  v[3] = -std::numeric_limits<float>::infinity();
  v[4] = std::numeric_limits<float>::quiet_NaN();
  std::vector<uint16_t> r(1000);
  engine::round_to_bf16(v.data_ptr<float>(), r.data(), 1000);
  const torch::Tensor aten = v.to(torch::kBFloat16).contiguous();
  auto is_nan = [](uint16_t h) { return (h & 0x7F80u) == 0x7F80u && (h & 0x7Fu) != 0; };
  for (int i = 0; i < 1000; ++i)
    if (i == 4)  // NaN: a NaN (ATen's vectorized conversion gives 0xFFFF, its scalar one 0x7FC0)
      EXPECT_TRUE(is_nan(r[i]) && is_nan(bits16(aten)[i]));
    else
      EXPECT_EQ(r[i], bits16(aten)[i]) << "value " << i << ": " << v[i].item<float>();
}

// The row passes that make the backward's operands under bf16-mixed (kernels.h): GELU and its
// derivative in float32 rounded to bfloat16, and the column sums beside. Against float64 GELU
// (erf from libm) element by element: the float32 value y sits within e = 1e-6 (1 + |h|) |dh|
// of the float64 one (Abramowitz-Stegun's erf is within 1.5e-7, a dozen float32 operations
// within 1e-6 relative), so wherever every value within e of the float64 one rounds to the same
// bfloat16, that must be the kernel's output, bit for bit (the others, at most a few in a
// ten, are skipped and counted). The sums against float64 within rows 2^-24 sum|g| plus e
// per row. Plain arithmetic: runs on any CPU.
TEST(Bf16Rows, GeluAndColumnSumsAgainstFloat64) {
  torch::manual_seed(8);
  const int64_t rows = 300, m = 96;
  const torch::Tensor h = torch::randn({rows, m}) * 2.5, dh = torch::randn({rows, m});
  const torch::Tensor h64 = h.to(torch::kFloat64), dh64 = dh.to(torch::kFloat64);
  const torch::Tensor cdf = 0.5 * (1 + torch::erf(h64 / std::sqrt(2.0)));
  const torch::Tensor gelu64 = h64 * cdf;
  const torch::Tensor grad64 = dh64 * (cdf + h64 * torch::exp(-0.5 * h64 * h64) / std::sqrt(2 * M_PI));
  const float* H = h.data_ptr<float>();
  const float* DH = dh.data_ptr<float>();
  auto bf16_of = [](double v) {
    uint16_t out;
    const float f = static_cast<float>(v);
    engine::round_to_bf16(&f, &out, 1);
    return out;
  };
  // out against ref (float64) with the float32 value's tolerance e: {checked, mismatches}.
  auto compare = [&](const std::vector<uint16_t>& out, const torch::Tensor& ref, const torch::Tensor& scale) {
    int64_t checked = 0, wrong = 0;
    const double* R = ref.data_ptr<double>();
    const double* S = scale.data_ptr<double>();
    for (int64_t i = 0; i < rows * m; ++i) {
      const double e = 1e-6 * S[i] + 1e-30;
      const uint16_t lo = bf16_of(R[i] - e), hi = bf16_of(R[i] + e);
      if (lo != hi) continue;  // near a rounding boundary: either neighbour is right
      ++checked;
      if (out[i] != lo && ++wrong <= 3)
        ADD_FAILURE() << "element " << i << " (h = " << H[i] << "): " << out[i] << " against " << lo;
    }
    return std::pair{checked, wrong};
  };
  const torch::Tensor scale_f = (1 + h64.abs()), scale_b = (1 + h64.abs()) * dh64.abs();

  std::vector<uint16_t> out(rows * m);
  engine::gelu_bf16_rows(H, rows, m, out.data());
  const auto [fc, fw] = compare(out, gelu64, scale_f);

  std::vector<float> sums(m, 0.0f);
  engine::gelu_backward_bf16_rows(DH, H, rows, m, out.data(), sums.data());
  const auto [bc, bw] = compare(out, grad64, scale_b);
  const torch::Tensor exact_sums = grad64.sum(0), abs_sums = grad64.abs().sum(0), slack = scale_b.sum(0);
  double worst_sum = 0;
  for (int64_t c = 0; c < m; ++c) {
    const double bound = rows * std::ldexp(1.0, -24) * abs_sums[c].item<double>() + 1e-6 * slack[c].item<double>();
    worst_sum = std::max(worst_sum, std::abs(sums[c] - exact_sums[c].item<double>()) / bound);
  }

  std::vector<float> plain_sums(m, 0.0f);
  engine::bf16_rows_and_column_sums(DH, rows, m, out.data(), plain_sums.data());
  std::vector<uint16_t> rounded(rows * m);
  engine::round_to_bf16(DH, rounded.data(), rows * m);
  EXPECT_EQ(out, rounded) << "bf16_rows_and_column_sums's rounding is not round_to_bf16's";
  const torch::Tensor dh_sums = dh64.sum(0), dh_abs = dh64.abs().sum(0);
  double worst_plain = 0;
  for (int64_t c = 0; c < m; ++c)
    worst_plain = std::max(worst_plain, std::abs(plain_sums[c] - dh_sums[c].item<double>()) /
                                            (rows * std::ldexp(1.0, -24) * dh_abs[c].item<double>()));

  std::printf("GELU: %lld of %lld checked bit for bit, %lld wrong; its gradient: %lld checked, %lld wrong; sums' "
              "error / bound %.3f (GELU's gradient), %.3f (dy)\n",
              static_cast<long long>(fc), static_cast<long long>(rows * m), static_cast<long long>(fw),
              static_cast<long long>(bc), static_cast<long long>(bw), worst_sum, worst_plain);
  EXPECT_EQ(fw, 0);
  EXPECT_EQ(bw, 0);
  EXPECT_GT(fc, rows * m * 8 / 10);  // the cases near a boundary are few (measured 10-12%)
  EXPECT_GT(bc, rows * m * 8 / 10);
  EXPECT_LE(worst_sum, 1.0);
  EXPECT_LE(worst_plain, 1.0);
}

// The weights' bfloat16 copies are made once per optimizer step: a training step of n + k = 7
// iterations casts each of the nine weight matrices once (projection, Wx, Wh, qkv, out_proj,
// fc1, fc2, the head's two), a forward pass after an unchanged step casts none, and a copy made
// before AdamW's step is never used after it (the model then equals a fresh one of the same
// weights, bit for bit).
TEST(MixedPrecision, WeightsAreCastOncePerOptimizerStep) {
  SKIP_WITHOUT_BF16();
  ModelConfig c = default_config("prefix-sums", Recall::kExternal, Norm::kPost, 32);
  c.heads = 4;
  torch::manual_seed(2);
  LoopedTransformer model(c);
  model->set_mixed_precision(true);
  AdamW adamw(model->named_parameters(), {});
  const torch::Tensor input = torch::randint(0, 2, {4, 32, 1}).to(torch::kFloat32) - 0.5;
  const torch::Tensor target = torch::randint(0, 2, {4, 32});
  constexpr int64_t kMatrices = 9;
  for (int step = 0; step < 2; ++step) {
    const int64_t before = engine::bf16_weight_casts();
    adamw.zero_grad();
    progressive_backward(*model, input, target, 3, 4, 1.0, false);
    EXPECT_EQ(engine::bf16_weight_casts() - before, kMatrices) << "training step " << step;
    adamw.step(1e-2);
  }
  torch::NoGradGuard no_grad;
  int64_t before = engine::bf16_weight_casts();
  const torch::Tensor first = model->forward(input, 20).logits;
  EXPECT_EQ(engine::bf16_weight_casts() - before, kMatrices) << "the first forward after AdamW's step";
  before = engine::bf16_weight_casts();
  const torch::Tensor again = model->forward(input, 20).logits;
  EXPECT_EQ(engine::bf16_weight_casts() - before, 0) << "20 more iterations with unchanged weights";
  LoopedTransformer twin(c);
  for (const auto& item : model->named_parameters()) twin->named_parameters()[item.key()].copy_(item.value());
  twin->set_mixed_precision(true);
  EXPECT_TRUE(torch::equal(twin->forward(input, 20).logits, first)) << "a stale bfloat16 copy was used";
  EXPECT_TRUE(torch::equal(again, first));
}

// The float64 references: the model written out again from SPEC section 1 with LibTorch's
// operators in float64. With `round`, every linear layer rounds as the fused engine's bf16-mixed
// products (products.h) round: the operands x and W to bfloat16, in the backward the output's
// gradient to bfloat16; the products themselves and the bias in float64 (the engine's are
// float32, within the accumulation bound). Without, nothing is rounded.
struct RoundedLinear : torch::autograd::Function<RoundedLinear> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& W,
                               const torch::Tensor& b) {
    const torch::Tensor xr = round16(x), Wr = round16(W);
    ctx->save_for_backward({xr, Wr});
    return xr.matmul(Wr.t()) + b;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor g = round16(grads[0]);
    const int64_t out = g.size(-1);
    const torch::Tensor x2 = saved[0].reshape({-1, saved[0].size(-1)});
    return {g.matmul(saved[1]), g.reshape({-1, out}).t().mm(x2), grads[0].reshape({-1, out}).sum(0)};
  }
};

struct Reference {
  LoopedTransformerImpl& m;  // float64 weights
  bool round;

  torch::Tensor linear(const torch::Tensor& x, const AtenLinearImpl& l) const {
    return round ? RoundedLinear::apply(x, l.weight, l.bias) : at::linear(x, l.weight, l.bias);
  }
  const AtenLinearImpl& mlp(const BlockImpl& b, size_t i) const { return *b.mlp->ptr(i)->as<AtenLinearImpl>(); }

  torch::Tensor attention(const torch::Tensor& u, const AttentionImpl& a, const Positions& p,
                          const torch::Tensor& mask) const {
    const int64_t B = u.size(0), L = u.size(1), d = u.size(2), hd = d / a.heads;
    const torch::Tensor split = linear(u, *a.qkv).view({B, L, 3, a.heads, hd}).permute({2, 0, 3, 1, 4});
    const torch::Tensor q = rms_norm(apply_rope(split[0], p.cos, p.sin), a.q_norm->weight);
    const torch::Tensor k = rms_norm(apply_rope(split[1], p.cos, p.sin), a.k_norm->weight);
    const torch::Tensor scores = q.matmul(k.transpose(-1, -2)) / std::sqrt(static_cast<double>(hd)) + mask;
    const torch::Tensor out = torch::softmax(scores, -1).matmul(split[2]);  // [B, heads, L, hd]
    return linear(out.transpose(1, 2).reshape({B, L, d}), *a.out_proj);
  }

  torch::Tensor sublayer(const torch::Tensor& r, const torch::Tensor& wh, const BlockImpl& b, const Positions& p,
                         const torch::Tensor& mask, bool is_attention) const {
    torch::Tensor u = b.pre_norm_func ? rms_norm(r, b.pre_norm_func->weight) : r;
    if (b.recall_kind == Recall::kInternal) u = linear(u, *b.Wx) + wh;
    torch::Tensor y = is_attention ? attention(u, *b.attn, p, mask) : linear(torch::gelu(linear(u, mlp(b, 0))), mlp(b, 2));
    if (b.peri_norm_func) y = rms_norm(y, b.peri_norm_func->weight);
    const torch::Tensor out = r + y;
    return b.post_norm_func ? rms_norm(out, b.post_norm_func->weight) : out;
  }

  torch::Tensor logits(const torch::Tensor& input, int64_t iterations) const {
    const ModelConfig& c = m.config();
    const Positions p = m.positions(c.grid);
    const int64_t L = p.cos.size(0);
    torch::Tensor mask = torch::zeros({L, L}, torch::kFloat64);
    if (c.neighbourhood_attention)
      mask = torch::full({L, L}, -std::numeric_limits<double>::infinity(), torch::kFloat64)
                 .scatter_(1, neighbourhood_index(c.grid, c.window), 0.0);
    const auto& b = *(*m.recur_blocks)[0]->as<BlockImpl>();
    const torch::Tensor x0 = linear(input, *m.projection);
    const torch::Tensor wh = b.Wh ? linear(x0, *b.Wh) : torch::Tensor();
    torch::Tensor x = x0;
    for (int64_t t = 0; t < iterations; ++t) {
      const torch::Tensor r = b.recall_kind == Recall::kExternal ? linear(x, *b.Wx) + wh : x;
      x = sublayer(sublayer(r, wh, b, p, mask, true), wh, b, p, mask, false);
    }
    const auto& h = *m.head;
    const torch::Tensor normed = rms_norm(x, h.ptr(0)->as<RMSNormImpl>()->weight);
    return linear(torch::gelu(linear(normed, *h.ptr(1)->as<AtenLinearImpl>())), *h.ptr(3)->as<AtenLinearImpl>());
  }
};

torch::Tensor flat_gradients(torch::nn::Module& m) {
  std::vector<torch::Tensor> g;
  for (const auto& p : m.parameters()) g.push_back(p.grad().to(torch::kFloat64).flatten());
  return torch::cat(g);
}

double relative_to(const torch::Tensor& a, const torch::Tensor& b) {
  return ((a.to(torch::kFloat64) - b).norm() / b.norm()).item<double>();
}

// The fused engine's bf16-mixed forward (3 iterations, the logits) and gradients (of the
// cross-entropy, through all three) against the float64 references. Every bfloat16 rounding
// moves a value by at most 2^-8 relative (half a step of 8 significant bits); a forward and
// backward through 3 iterations passes ~25 rounded operands in series, so the distance to the
// unrounded reference is of the order of 2^-8 sqrt(25) ~ 2e-2 normwise (rounding errors of
// random sign adding in quadrature). The checks:
//  - to the unrounded reference, within 1.25x of the plain engine's autocast, which rounds the
//    same operands and, besides, every product's output (and the attention's products, which the
//    fused engine keeps in float32), and below 5%;
//  - to the rounded reference (the same operand roundings in float64, products unrounded), at
//    most 0.6x of the distance to the unrounded one and below 1e-2: the two differ where float32
//    accumulation (gamma_K ~ K 2^-24) and float32 row passes move a value across a bfloat16
//    rounding boundary, after which the difference is one bfloat16 step and propagates
//    (measured 3e-6 to 0.4x here). A product that skipped an operand's rounding, rounded by
//    truncation, rounded its output or added the bias in bfloat16 would sit as far from the
//    rounded reference as from the unrounded one;
//  - the forward without gradient (tiles of sequences, the same products on one thread each)
//    within 1e-2 of the rounded reference.
TEST(MixedPrecision, FusedEngineAgainstFloat64References) {
  SKIP_WITHOUT_BF16();
  struct Case {
    std::string task;
    Recall recall;
    Norm norm;
  };
  for (const Case& k : std::vector<Case>{{"prefix-sums", Recall::kExternal, Norm::kPost},
                                         {"prefix-sums", Recall::kInternal, Norm::kPre},
                                         {"sudoku", Recall::kExternal, Norm::kPost},
                                         {"sudoku", Recall::kNone, Norm::kPeri}}) {
    const std::string name = k.task + " " + to_string(k.recall) + " " + to_string(k.norm);
    ModelConfig c = default_config(k.task, k.recall, k.norm, 64);
    c.heads = 4;
    torch::manual_seed(21);
    LoopedTransformer model(c);
    const int64_t B = 6, L = k.task == "sudoku" ? 81 : 32, C = c.out_channels;
    const torch::Tensor input =
        k.task == "sudoku"
            ? torch::nn::functional::one_hot(torch::randint(0, 10, {B, L}), 10).to(torch::kFloat32)
            : torch::randint(0, 2, {B, L, 1}).to(torch::kFloat32) - 0.5;
    const torch::Tensor target = torch::randint(0, C, {B, L});
    constexpr int64_t T = 3;
    auto loss_of = [&](const torch::Tensor& logits) {
      return torch::nn::functional::cross_entropy(logits.reshape({-1, C}), target.reshape({-1}));
    };
    auto run = [&](torch::nn::Module& m, const std::function<torch::Tensor()>& logits) {
      m.zero_grad();
      const torch::Tensor out = logits();
      loss_of(out).backward();
      return std::pair{out.detach().to(torch::kFloat64), flat_gradients(m)};
    };
    model->set_mixed_precision(true);
    const auto fused = run(*model, [&] { return model->forward(input, T).logits; });
    torch::Tensor tiles;
    {
      torch::NoGradGuard no_grad;  // without gradient: the tiled forward and the fused readout's products
      tiles = model->forward(input, T).logits.to(torch::kFloat64);
    }
    std::pair<torch::Tensor, torch::Tensor> autocast;
    {
      PlainEngine plain;
      autocast = run(*model, [&] { return model->forward(input, T).logits; });
    }
    LoopedTransformer m64(c);
    {
      torch::NoGradGuard no_grad;
      for (const auto& item : model->named_parameters()) m64->named_parameters()[item.key()].copy_(item.value());
    }
    m64->to(torch::kFloat64);
    const torch::Tensor input64 = input.to(torch::kFloat64);
    const auto rounded = run(*m64, [&] { return Reference{*m64, true}.logits(input64, T); });
    const auto exact = run(*m64, [&] { return Reference{*m64, false}.logits(input64, T); });

    const double fused_rounded[] = {relative_to(fused.first, rounded.first), relative_to(fused.second, rounded.second)};
    const double fused_exact[] = {relative_to(fused.first, exact.first), relative_to(fused.second, exact.second)};
    const double autocast_exact[] = {relative_to(autocast.first, exact.first), relative_to(autocast.second, exact.second)};
    const double tiles_rounded = relative_to(tiles, rounded.first);
    std::printf("%s: logits / gradients, relative to the rounded float64 reference %.2e / %.2e (tiles %.2e); to "
                "the unrounded one %.2e / %.2e (autocast %.2e / %.2e)\n",
                name.c_str(), fused_rounded[0], fused_rounded[1], tiles_rounded, fused_exact[0], fused_exact[1],
                autocast_exact[0], autocast_exact[1]);
    for (int i = 0; i < 2; ++i) {
      const char* what = i == 0 ? "logits" : "gradients";
      EXPECT_LT(fused_rounded[i], 1e-2) << name << " " << what << ": against the rounded reference";
      EXPECT_LT(fused_rounded[i], 0.6 * fused_exact[i]) << name << " " << what << ": not the reference's roundings";
      EXPECT_LT(fused_exact[i], 1.25 * autocast_exact[i]) << name << " " << what << ": farther from float64 than autocast";
      EXPECT_LT(fused_exact[i], 0.05) << name << " " << what;
      EXPECT_GT(fused_exact[i], 1e-4) << name << " " << what << ": as close as float32: not bfloat16 products";
    }
    EXPECT_LT(tiles_rounded, 1e-2) << name << ": the forward without gradient";
  }
}

}  // namespace
}  // namespace looplab
