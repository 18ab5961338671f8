#include "looplab/model/fused_block.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "looplab/model/looped_transformer.h"

namespace looplab {

namespace {

bool turned_off() {
  static const bool off = [] {
    const char* e = std::getenv("LOOPLAB_ENGINE");
    return e && std::strcmp(e, "plain") == 0;
  }();
  return off;
}

// Reductions over a row (64-256 floats) vectorize only if their additions may be reordered;
// GCC allows that per function. The sums then differ from LibTorch's in the last bits only.
#if defined(__GNUC__) && !defined(__clang__)
#define LOOPLAB_REORDER __attribute__((optimize("associative-math", "no-signed-zeros", "no-trapping-math")))
#else
#define LOOPLAB_REORDER
#endif

// out = x / sqrt(mean(x^2) + eps) * w (out may be x): rms_norm of looped_transformer.h.
LOOPLAB_REORDER void rms_row(const float* x, const float* w, float* out, int64_t n) {
  float s = 0;
  for (int64_t i = 0; i < n; ++i) s += x[i] * x[i];
  const float inv = 1.0f / std::sqrt(s / static_cast<float>(n) + std::numeric_limits<float>::epsilon());
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] * inv * w[i];
}

// The two per-token loops that run at every iteration, compiled for AVX-512 and AVX2 beside
// the baseline x86-64 (chosen once at load time): the rest of looplab is built for any x86-64.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define LOOPLAB_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define LOOPLAB_CLONES
#endif

// exp(x) for x <= 0 (a softmax's shifted scores) in plain arithmetic, so that a loop of them
// vectorizes (libm's expf is a call per element): Cephes' expf, x = n ln 2 + r with |r| <= ln2/2,
// a degree-6 polynomial in r, times 2^n built in the exponent bits. Relative error ~1e-7; 0 for
// x below -87, where expf is below float's normal range.
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

// RoPE, then the per-head RMSNorm, of every q and k of the rows [begin, end) of qkv [N, 3d].
struct RopeRows {
  float* qkv;
  const float *cos, *sin;  // [L, head_dim / 2]
  const float *q_norm, *k_norm;
  int64_t L, d, heads;
};

LOOPLAB_CLONES LOOPLAB_REORDER void rope_rows(const RopeRows& a, int64_t begin, int64_t end) {
  const int64_t hd = a.d / a.heads, half = hd / 2;
  const float eps = std::numeric_limits<float>::epsilon();
  for (int64_t i = begin; i < end; ++i) {
    const float* c = a.cos + (i % a.L) * half;
    const float* s = a.sin + (i % a.L) * half;
    for (int64_t part = 0; part < 2; ++part) {
      const float* w = part == 0 ? a.q_norm : a.k_norm;
      for (int64_t h = 0; h < a.heads; ++h) {
        float* v = a.qkv + i * 3 * a.d + part * a.d + h * hd;
        float ss = 0;
        for (int64_t j = 0; j < half; ++j) {
          const float re = v[2 * j], im = v[2 * j + 1];
          const float x = re * c[j] - im * s[j], y = re * s[j] + im * c[j];
          v[2 * j] = x;
          v[2 * j + 1] = y;
          ss += x * x + y * y;
        }
        const float inv = 1.0f / std::sqrt(ss / static_cast<float>(hd) + eps);
        for (int64_t t = 0; t < hd; ++t) v[t] = v[t] * inv * w[t];
      }
    }
  }
}

// softmax(q k^T * scale) v over each query's W window keys, every head, rows [begin, end).
struct AttentionRows {
  const float* qkv;     // [N, 3d]: q, k, v, each head's head_dim values in turn
  const int64_t* keys;  // [L, W] key positions of each query position
  float* out;           // [N, d]
  int64_t L, d, heads, W;
  float scale;
};

constexpr int64_t kMaxWidth = 1024, kMaxHeads = 64, kMaxWindow = 256;

LOOPLAB_CLONES LOOPLAB_REORDER void attention_rows(const AttentionRows& a, int64_t begin, int64_t end) {
  const int64_t d = a.d, H = a.heads, hd = d / H, W = a.W;
  float prod[kMaxWidth], weight[kMaxWidth], score[kMaxHeads * kMaxWindow], shift[kMaxHeads * kMaxWindow];
  for (int64_t i = begin; i < end; ++i) {
    const int64_t seq = (i / a.L) * a.L;
    const int64_t* window = a.keys + (i % a.L) * W;
    const float* q = a.qkv + i * 3 * d;
    // Scores of all heads against key j at once: one product over the width, then a sum per head.
    for (int64_t j = 0; j < W; ++j) {
      const float* k = a.qkv + (seq + window[j]) * 3 * d + d;
      for (int64_t c = 0; c < d; ++c) prod[c] = q[c] * k[c];
      for (int64_t h = 0; h < H; ++h) {
        float s = 0;
        for (int64_t t = 0; t < hd; ++t) s += prod[h * hd + t];
        score[h * W + j] = s * a.scale;
      }
    }
    // The softmax of each head's W scores, the exponentials of all heads in one vector loop.
    for (int64_t h = 0; h < H; ++h) {
      float top = score[h * W];
      for (int64_t j = 1; j < W; ++j) top = std::max(top, score[h * W + j]);
      for (int64_t j = 0; j < W; ++j) shift[h * W + j] = top;
    }
    for (int64_t k = 0; k < H * W; ++k) score[k] = exp_nonpositive(score[k] - shift[k]);
    for (int64_t h = 0; h < H; ++h) {
      float z = 0;
      for (int64_t j = 0; j < W; ++j) z += score[h * W + j];
      const float inv = 1.0f / z;
      for (int64_t j = 0; j < W; ++j) score[h * W + j] *= inv;
    }
    float* o = a.out + i * d;
    for (int64_t c = 0; c < d; ++c) o[c] = 0;
    for (int64_t j = 0; j < W; ++j) {
      const float* v = a.qkv + (seq + window[j]) * 3 * d + 2 * d;
      for (int64_t h = 0; h < H; ++h)
        for (int64_t t = 0; t < hd; ++t) weight[h * hd + t] = score[h * W + j];
      for (int64_t c = 0; c < d; ++c) o[c] += weight[c] * v[c];
    }
  }
}

const float* data(const torch::Tensor& t) { return t.defined() ? t.data_ptr<float>() : nullptr; }

// Rows [0, n) in parallel, a few hundred at a time.
template <typename F>
void each_row(int64_t n, const F& f) {
  at::parallel_for(0, n, 128, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) f(i);
  });
}

const torch::nn::LinearImpl& linear(const torch::nn::Sequential& s, size_t i) {
  return *s->ptr(i)->as<torch::nn::LinearImpl>();
}

}  // namespace

bool fused_block_applies(const BlockImpl& block, const torch::Tensor& x, const Positions& p) {
  return !turned_off() && !torch::GradMode::is_enabled() && x.device().is_cpu() &&
         x.scalar_type() == torch::kFloat32 && x.dim() == 3 && p.keys.defined() && !block.gru &&
         block.attn->qkv->weight.scalar_type() == torch::kFloat32 && x.size(2) <= kMaxWidth &&
         block.attn->heads <= kMaxHeads && p.keys.size(1) <= kMaxWindow;
}

torch::Tensor fused_block_forward(const BlockImpl& b, const torch::Tensor& x_in, const torch::Tensor& wh_x0,
                                  const Positions& p) {
  const int64_t B = x_in.size(0), L = x_in.size(1), d = x_in.size(2), N = B * L;
  const int64_t H = b.attn->heads, hd = d / H;
  const torch::Tensor x = x_in.contiguous().view({N, d});
  const bool external = b.recall_kind == Recall::kExternal, internal = b.recall_kind == Recall::kInternal;
  const torch::Tensor wh = (external || internal) ? wh_x0.contiguous().view({N, d}) : torch::Tensor();
  const float* WH = data(wh);
  const float* pre_w = b.pre_norm_func ? data(b.pre_norm_func->weight) : nullptr;
  const float* peri_w = b.peri_norm_func ? data(b.peri_norm_func->weight) : nullptr;
  const float* post_w = b.post_norm_func ? data(b.post_norm_func->weight) : nullptr;

  // The sublayer's input u = preN(r), then g(u, x0) = Wx u + Wh x0 for internal recall.
  auto sublayer_input = [&](const torch::Tensor& r) {
    torch::Tensor u = r;
    if (pre_w) {
      u = torch::empty_like(r);
      const float* R = data(r);
      float* U = u.data_ptr<float>();
      each_row(N, [&](int64_t i) { rms_row(R + i * d, pre_w, U + i * d, d); });
    }
    if (internal) {
      u = at::linear(u, b.Wx->weight, b.Wx->bias);
      float* U = u.data_ptr<float>();
      each_row(N, [&](int64_t i) {
        for (int64_t c = 0; c < d; ++c) U[i * d + c] += WH[i * d + c];
      });
    }
    return u;
  };
  // out = postN(r + periN(y)), in place in y.
  auto sublayer_output = [&](const torch::Tensor& r, torch::Tensor& y) {
    const float* R = data(r);
    float* Y = y.data_ptr<float>();
    each_row(N, [&](int64_t i) {
      float* yr = Y + i * d;
      if (peri_w) rms_row(yr, peri_w, yr, d);
      for (int64_t c = 0; c < d; ++c) yr[c] += R[i * d + c];
      if (post_w) rms_row(yr, post_w, yr, d);
    });
  };

  // --- Attention sublayer ---------------------------------------------------------------------
  torch::Tensor r = x;
  if (external) {
    r = at::linear(x, b.Wx->weight, b.Wx->bias);
    float* Rw = r.data_ptr<float>();
    each_row(N, [&](int64_t i) {
      for (int64_t c = 0; c < d; ++c) Rw[i * d + c] += WH[i * d + c];
    });
  }
  const torch::Tensor u = sublayer_input(r);
  torch::Tensor qkv = at::linear(u, b.attn->qkv->weight, b.attn->qkv->bias);  // [N, 3d]: q, k, v, heads inside
  {
    const torch::Tensor cos = p.cos.contiguous(), sin = p.sin.contiguous();
    RopeRows a;
    a.qkv = qkv.data_ptr<float>();
    a.cos = data(cos), a.sin = data(sin);
    a.q_norm = data(b.attn->q_norm->weight), a.k_norm = data(b.attn->k_norm->weight);
    a.L = L, a.d = d, a.heads = H;
    at::parallel_for(0, N, 64, [&](int64_t begin, int64_t end) { rope_rows(a, begin, end); });
  }
  torch::Tensor attended = torch::empty({N, d}, x.options());
  {
    const torch::Tensor keys = p.keys.contiguous();
    AttentionRows a;
    a.qkv = data(qkv);
    a.keys = keys.data_ptr<int64_t>();
    a.out = attended.data_ptr<float>();
    a.L = L, a.d = d, a.heads = H, a.W = keys.size(1);
    a.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(hd)));
    at::parallel_for(0, N, 64, [&](int64_t begin, int64_t end) { attention_rows(a, begin, end); });
  }
  torch::Tensor z = at::linear(attended, b.attn->out_proj->weight, b.attn->out_proj->bias);
  sublayer_output(r, z);

  // --- MLP sublayer ---------------------------------------------------------------------------
  // (Tiling it so that the 4x wider hidden layer stays in cache measured slower here: the
  // products lose more at 128-row tiles than the passes gain.)
  const torch::Tensor u2 = sublayer_input(z);
  const auto &fc1 = linear(b.mlp, 0), &fc2 = linear(b.mlp, 2);
  torch::Tensor hidden = at::linear(u2, fc1.weight, fc1.bias);
  at::gelu_(hidden);
  torch::Tensor out = at::linear(hidden, fc2.weight, fc2.bias);
  sublayer_output(z, out);
  return out.view({B, L, d});
}

}  // namespace looplab
