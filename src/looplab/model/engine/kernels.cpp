// The fused engine's windowed row kernels (kernels.h): RoPE with QK-norm and the neighbourhood
// attention, each with its backward. This file is compiled with reordered additions
// (CMakeLists.txt): the row reductions over 64-256 values vectorize, and their sums differ from
// LibTorch's in the last bits only.
#include "looplab/model/engine/kernels.h"

#include <algorithm>
#include <cstring>

#include "looplab/model/engine/row_math.h"

namespace looplab::engine {

template <typename T>
LOOPLAB_CLONES void rope_rows(const RopeRows<T>& a, int64_t begin, int64_t end) {
  const int64_t hd = a.d / a.heads, half = hd / 2;
  for (int64_t i = begin; i < end; ++i) {
    const T* c = a.cos + (i % a.L) * half;
    const T* s = a.sin + (i % a.L) * half;
    for (int64_t part = 0; part < 2; ++part) {
      const T* w = part == 0 ? a.q_norm : a.k_norm;
      for (int64_t h = 0; h < a.heads; ++h) {
        const T* v = a.in + i * 3 * a.d + part * a.d + h * hd;
        T* o = a.out + i * 3 * a.d + part * a.d + h * hd;
        T ss = 0;
        for (int64_t j = 0; j < half; ++j) {
          const T re = v[2 * j], im = v[2 * j + 1];
          const T x = re * c[j] - im * s[j], y = re * s[j] + im * c[j];
          o[2 * j] = x;
          o[2 * j + 1] = y;
          ss += x * x + y * y;
        }
        const T inv = T(1) / std::sqrt(ss / static_cast<T>(hd) + kEps<T>);
        for (int64_t t = 0; t < hd; ++t) o[t] = o[t] * inv * w[t];
      }
    }
    if (a.out != a.in) std::memcpy(a.out + i * 3 * a.d + 2 * a.d, a.in + i * 3 * a.d + 2 * a.d, a.d * sizeof(T));
  }
}

template <typename T>
LOOPLAB_CLONES void rope_rows_backward(const RopeRowsBackward<T>& a, int64_t begin, int64_t end,
                                                       T* dq_norm, T* dk_norm) {
  const int64_t hd = a.d / a.heads, half = hd / 2;
  T x[kMaxWidth];
  for (int64_t i = begin; i < end; ++i) {
    const T* c = a.cos + (i % a.L) * half;
    const T* s = a.sin + (i % a.L) * half;
    for (int64_t part = 0; part < 2; ++part) {
      const T* w = part == 0 ? a.q_norm : a.k_norm;
      T* dw = part == 0 ? dq_norm : dk_norm;
      for (int64_t h = 0; h < a.heads; ++h) {
        const T* v = a.raw + i * 3 * a.d + part * a.d + h * hd;
        T* g = a.dqkv + i * 3 * a.d + part * a.d + h * hd;
        for (int64_t j = 0; j < half; ++j) {
          const T re = v[2 * j], im = v[2 * j + 1];
          x[2 * j] = re * c[j] - im * s[j];
          x[2 * j + 1] = re * s[j] + im * c[j];
        }
        rms_row_backward(x, w, g, g, false, dw, hd);
        // The rotation's transpose: the rotation by minus the angle.
        for (int64_t j = 0; j < half; ++j) {
          const T gx = g[2 * j], gy = g[2 * j + 1];
          g[2 * j] = gx * c[j] + gy * s[j];
          g[2 * j + 1] = -gx * s[j] + gy * c[j];
        }
      }
    }
  }
}

template <typename T>
LOOPLAB_CLONES void attention_rows(const AttentionRows<T>& a, int64_t begin, int64_t end) {
  const int64_t d = a.d, H = a.heads, hd = d / H, W = a.W;
  T prod[kMaxWidth], weight[kMaxWidth], score[kMaxHeads * kMaxWindow], shift[kMaxHeads * kMaxWindow];
  for (int64_t i = begin; i < end; ++i) {
    const int64_t seq = (i / a.L) * a.L;
    const int64_t* window = a.keys + (i % a.L) * W;
    const T* q = a.qkv + i * 3 * d;
    // Scores of all heads against key j at once: one product over the width, then a sum per head.
    for (int64_t j = 0; j < W; ++j) {
      const T* k = a.qkv + (seq + window[j]) * 3 * d + d;
      for (int64_t c = 0; c < d; ++c) prod[c] = q[c] * k[c];
      for (int64_t h = 0; h < H; ++h) {
        T s = 0;
        for (int64_t t = 0; t < hd; ++t) s += prod[h * hd + t];
        score[h * W + j] = s * a.scale;
      }
    }
    // The softmax of each head's W scores, the exponentials of all heads in one vector loop.
    for (int64_t h = 0; h < H; ++h) {
      T top = score[h * W];
      for (int64_t j = 1; j < W; ++j) top = std::max(top, score[h * W + j]);
      for (int64_t j = 0; j < W; ++j) shift[h * W + j] = top;
    }
    for (int64_t k = 0; k < H * W; ++k) score[k] = exp_nonpositive(score[k] - shift[k]);
    for (int64_t h = 0; h < H; ++h) {
      T z = 0;
      for (int64_t j = 0; j < W; ++j) z += score[h * W + j];
      const T inv = T(1) / z;
      for (int64_t j = 0; j < W; ++j) score[h * W + j] *= inv;
    }
    if (a.probs) std::memcpy(a.probs + i * H * W, score, H * W * sizeof(T));
    T* o = a.out + i * d;
    for (int64_t c = 0; c < d; ++c) o[c] = 0;
    for (int64_t j = 0; j < W; ++j) {
      const T* v = a.qkv + (seq + window[j]) * 3 * d + 2 * d;
      for (int64_t h = 0; h < H; ++h)
        for (int64_t t = 0; t < hd; ++t) weight[h * hd + t] = score[h * W + j];
      for (int64_t c = 0; c < d; ++c) o[c] += weight[c] * v[c];
    }
  }
}

template <typename T>
LOOPLAB_CLONES void attention_rows_backward(const AttentionRowsBackward<T>& a, int64_t seq_begin,
                                                            int64_t seq_end) {
  const int64_t d = a.d, H = a.heads, hd = d / H, W = a.W;
  T prod[kMaxWidth], dp[kMaxHeads * kMaxWindow], weight[kMaxWidth];
  for (int64_t i = seq_begin * a.L; i < seq_end * a.L; ++i) {
    const int64_t seq = (i / a.L) * a.L;
    const int64_t* window = a.keys + (i % a.L) * W;
    const T* p = a.probs + i * H * W;
    const T* da = a.dout + i * d;
    const T* q = a.qkv + i * 3 * d;
    T* dq = a.dqkv + i * 3 * d;
    for (int64_t j = 0; j < W; ++j) {
      const T* v = a.qkv + (seq + window[j]) * 3 * d + 2 * d;
      T* dv = a.dqkv + (seq + window[j]) * 3 * d + 2 * d;
      for (int64_t h = 0; h < H; ++h)
        for (int64_t t = 0; t < hd; ++t) weight[h * hd + t] = p[h * W + j];
      for (int64_t c = 0; c < d; ++c) {
        prod[c] = da[c] * v[c];
        dv[c] += weight[c] * da[c];
      }
      for (int64_t h = 0; h < H; ++h) {
        T s = 0;
        for (int64_t t = 0; t < hd; ++t) s += prod[h * hd + t];
        dp[h * W + j] = s;
      }
    }
    for (int64_t h = 0; h < H; ++h) {
      T mean = 0;
      for (int64_t j = 0; j < W; ++j) mean += p[h * W + j] * dp[h * W + j];
      for (int64_t j = 0; j < W; ++j) dp[h * W + j] = p[h * W + j] * (dp[h * W + j] - mean) * a.scale;
    }
    for (int64_t j = 0; j < W; ++j) {
      const T* k = a.qkv + (seq + window[j]) * 3 * d + d;
      T* dk = a.dqkv + (seq + window[j]) * 3 * d + d;
      for (int64_t h = 0; h < H; ++h)
        for (int64_t t = 0; t < hd; ++t) weight[h * hd + t] = dp[h * W + j];
      for (int64_t c = 0; c < d; ++c) {
        dq[c] += weight[c] * k[c];
        dk[c] += weight[c] * q[c];
      }
    }
  }
}

LOOPLAB_CLONES_BY_LEVEL void bf16_rows_and_column_sums(const float* dy, int64_t rows, int64_t m, uint16_t* out, float* sums) {
  for (int64_t i = 0; i < rows; ++i) {
    const float* row = dy + i * m;
    uint16_t* o = out + i * m;
    for (int64_t c = 0; c < m; ++c) {
      o[c] = bf16_bits(row[c]);
      sums[c] += row[c];
    }
  }
}

LOOPLAB_CLONES_BY_LEVEL void gelu_bf16_rows(const float* h, int64_t rows, int64_t m, uint16_t* out) {
  for (int64_t i = 0; i < rows * m; ++i) out[i] = bf16_bits(gelu_erf(h[i]));
}

LOOPLAB_CLONES_BY_LEVEL void gelu_backward_bf16_rows(const float* dh, const float* h, int64_t rows, int64_t m, uint16_t* out,
                                            float* sums) {
  for (int64_t i = 0; i < rows; ++i) {
    const float *hr = h + i * m, *dr = dh + i * m;
    uint16_t* o = out + i * m;
    for (int64_t c = 0; c < m; ++c) {
      const float g = dr[c] * gelu_erf_derivative(hr[c]);
      o[c] = bf16_bits(g);
      sums[c] += g;
    }
  }
}

#define LOOPLAB_KERNELS(T)                                                                              \
  template void rope_rows<T>(const RopeRows<T>&, int64_t, int64_t);                                    \
  template void rope_rows_backward<T>(const RopeRowsBackward<T>&, int64_t, int64_t, T*, T*);           \
  template void attention_rows<T>(const AttentionRows<T>&, int64_t, int64_t);                          \
  template void attention_rows_backward<T>(const AttentionRowsBackward<T>&, int64_t, int64_t);
LOOPLAB_KERNELS(float)
LOOPLAB_KERNELS(double)

}  // namespace looplab::engine
