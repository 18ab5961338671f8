#include "looplab/model/fused_block.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "looplab/model/looped_transformer.h"
#include "looplab/model/row_math.h"
#include "looplab/runtime.h"
#include "looplab/util/error.h"

#ifdef LOOPLAB_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

namespace looplab {

// ---------------------------------------------------------------------------------------------
// Choosing the engine

namespace {
thread_local int plain_scopes = 0;
}  // namespace

bool plain_engine() {
  static const bool off = [] {
    const char* e = std::getenv("LOOPLAB_ENGINE");
    return e && std::strcmp(e, "plain") == 0;
  }();
  return off || plain_scopes > 0;
}

PlainEngine::PlainEngine() { ++plain_scopes; }
PlainEngine::~PlainEngine() { --plain_scopes; }

namespace {

// ---------------------------------------------------------------------------------------------
// Row kernels (float and double)

// This file is compiled with reordered additions (CMakeLists.txt): the row reductions over
// 64-256 values vectorize, and their sums differ from LibTorch's in the last bits only.

// The per-token loops that run at every iteration are LOOPLAB_CLONES (model/row_math.h).

// The epsilon of rms_norm (looped_transformer.h): the dtype's machine epsilon.
template <typename T>
constexpr T kEps = std::numeric_limits<T>::epsilon();

// out = x / sqrt(mean(x^2) + eps) * w (out may be x).
template <typename T>
inline void rms_row(const T* x, const T* w, T* out, int64_t n) {
  T s = 0;
  for (int64_t i = 0; i < n; ++i) s += x[i] * x[i];
  const T inv = T(1) / std::sqrt(s / static_cast<T>(n) + kEps<T>);
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] * inv * w[i];
}

// The gradient of rms_row with respect to its input x, given dy: dx = inv dy w - x inv^3
// sum(dy w x) / n, written to dx (or added to it); dw += dy x inv where dw is given. dx may be
// dy when not accumulating.
template <typename T>
inline void rms_row_backward(const T* x, const T* w, const T* dy, T* dx, bool accumulate, T* dw,
                                             int64_t n) {
  T s = 0, dot = 0;
  for (int64_t i = 0; i < n; ++i) {
    s += x[i] * x[i];
    dot += dy[i] * w[i] * x[i];
  }
  const T inv = T(1) / std::sqrt(s / static_cast<T>(n) + kEps<T>);
  const T c = inv * inv * inv * dot / static_cast<T>(n);
  if (dw)
    for (int64_t i = 0; i < n; ++i) dw[i] += dy[i] * x[i] * inv;
  for (int64_t i = 0; i < n; ++i) {
    const T g = inv * dy[i] * w[i] - x[i] * c;
    dx[i] = accumulate ? dx[i] + g : g;
  }
}


constexpr int64_t kMaxWidth = 1024, kMaxHeads = 64, kMaxWindow = kMaxFusedKeys;

// RoPE, then the per-head RMSNorm, of every q and k of the rows [begin, end) of qkv [N, 3d]
// (in: before, out: after; they may be the same buffer; v is copied when they differ).
template <typename T>
struct RopeRows {
  const T* in;
  T* out;
  const T *cos, *sin;  // [L, head_dim / 2]
  const T *q_norm, *k_norm;
  int64_t L, d, heads;
};

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

// The gradient of rope_rows: dqkv [N, 3d] holds the gradient of its q and k outputs and
// receives, in place, that of its inputs (v's passes through); dq_norm, dk_norm [head_dim]
// collect the norms' weight gradients of these rows.
template <typename T>
struct RopeRowsBackward {
  const T* raw;  // rope_rows' input
  T* dqkv;
  const T *cos, *sin, *q_norm, *k_norm;
  int64_t L, d, heads;
};

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

// softmax(q k^T * scale) v over each query's W window keys, every head, rows [begin, end);
// the softmax weights are kept in probs [N, heads, W] where given (for the backward).
template <typename T>
struct AttentionRows {
  const T* qkv;         // [N, 3d]: q, k, v, each head's head_dim values in turn
  const int64_t* keys;  // [L, W] key positions of each query position
  T* out;               // [N, d]
  T* probs;             // [N, heads, W] or null
  int64_t L, d, heads, W;
  T scale;
};

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

// The gradient of attention_rows for the whole sequences [begin, end): with p the softmax
// weights and da the gradient of a query's output, dv_j += p_j da, ds_j = p_j (da.v_j -
// sum_l p_l da.v_l) * scale, dq += sum_j ds_j k_j, dk_j += ds_j q. A key's gradient gathers
// from the queries that see it, all in the same sequence: one sequence per task, no races.
template <typename T>
struct AttentionRowsBackward {
  const T* qkv;  // attention_rows' input
  const int64_t* keys;
  const T* probs;
  const T* dout;  // [N, d]
  T* dqkv;        // [N, 3d], zero on entry
  int64_t L, d, heads, W;
  T scale;
};

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

// Full attention (every query sees the same L keys, in order), one (sequence, head) per task:
// the scores are then a small product Q K^T, computed kRows queries x one vector of keys at a
// time against K transposed, with no sum across a vector's lanes (what the row kernels above
// spend most of their time on at 81 keys); the other products accumulate whole vectors of a
// head's values. GCC's vector types keep the accumulators in registers where plain arrays
// were spilled (measured).
constexpr int64_t kRows = 4, kVectorBytes = 64;
template <typename T>
struct VecType;
template <>
struct VecType<float> {
  typedef float type __attribute__((vector_size(kVectorBytes)));
};
template <>
struct VecType<double> {
  typedef double type __attribute__((vector_size(kVectorBytes)));
};
template <typename T>
using Vec = typename VecType<T>::type;
template <typename T>
constexpr int64_t kLanes = kVectorBytes / sizeof(T);

// The helpers are forced inline into the cloned kernels below, so that each clone's instruction
// set reaches them and no vector value crosses a call (the ABI change GCC warns about for the
// baseline clone, silenced from here to the kernels' end).
#if defined(__GNUC__)
#define LOOPLAB_INLINE inline __attribute__((always_inline))
#else
#define LOOPLAB_INLINE inline
#endif
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

template <typename T>
LOOPLAB_INLINE Vec<T> load(const T* p) {
  Vec<T> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename T>
LOOPLAB_INLINE void store(T* p, const Vec<T>& v) {
  std::memcpy(p, &v, sizeof v);
}

// Key counts are padded to a whole number of float vectors (and so of double ones).
inline int64_t keys_padded(int64_t L) { return (L + kLanes<float> - 1) / kLanes<float> * kLanes<float>; }

// s[r * Lp + j] = sum_t a[r][t] bt[t * Lp + j] for the kRows rows a[r] and j < Lp.
template <typename T>
LOOPLAB_INLINE void rows_times_transposed(const std::array<const T*, kRows>& a, const T* bt, int64_t n,
                                          int64_t Lp, T* s) {
  for (int64_t jb = 0; jb < Lp; jb += kLanes<T>) {
    Vec<T> acc[kRows] = {};
    for (int64_t t = 0; t < n; ++t) {
      const Vec<T> b = load(bt + t * Lp + jb);
      for (int64_t r = 0; r < kRows; ++r) acc[r] += a[r][t] * b;
    }
    for (int64_t r = 0; r < kRows; ++r) store(s + r * Lp + jb, acc[r]);
  }
}

// o[r][t] += sum_{j < L} p[r * Lp + j] b_j[t] for t < n, the rows b_j = b + j * ldb.
template <typename T>
LOOPLAB_INLINE void rows_times(const T* p, int64_t Lp, const T* b, int64_t ldb, int64_t L, int64_t n,
                               const std::array<T*, kRows>& o) {
  int64_t t0 = 0;
  for (; t0 + kLanes<T> <= n; t0 += kLanes<T>) {
    Vec<T> acc[kRows] = {};
    for (int64_t j = 0; j < L; ++j) {
      const Vec<T> x = load(b + j * ldb + t0);
      for (int64_t r = 0; r < kRows; ++r) acc[r] += p[r * Lp + j] * x;
    }
    for (int64_t r = 0; r < kRows; ++r) store(o[r] + t0, load(o[r] + t0) + acc[r]);
  }
  for (int64_t j = 0; j < L; ++j)  // the rest of a head that is not a whole number of vectors
    for (int64_t t = t0; t < n; ++t)
      for (int64_t r = 0; r < kRows; ++r) o[r][t] += p[r * Lp + j] * b[j * ldb + t];
}

// The kRows row pointers base + (i0 + r) * ld, the rows past L repeating row L - 1 (their
// results are computed and dropped).
template <typename P>
inline std::array<P, kRows> block_rows(P base, int64_t ld, int64_t i0, int64_t L) {
  std::array<P, kRows> rows;
  for (int64_t r = 0; r < kRows; ++r) rows[r] = base + std::min(i0 + r, L - 1) * ld;
  return rows;
}

// bt[t * Lp + j] = rows_j[t] for j < L, zero for L <= j < Lp.
template <typename T>
inline void transpose_rows(const T* rows, int64_t ld, int64_t L, int64_t n, int64_t Lp, T* bt) {
  std::fill(bt, bt + n * Lp, T(0));
  for (int64_t j = 0; j < L; ++j)
    for (int64_t t = 0; t < n; ++t) bt[t * Lp + j] = rows[j * ld + t];
}

// row[j] = softmax(row * scale)[j] over j < L, in attention_rows' order: scaled, then shifted.
template <typename T>
inline void softmax_row(T* row, int64_t L, T scale) {
  for (int64_t j = 0; j < L; ++j) row[j] *= scale;
  T top = -std::numeric_limits<T>::infinity();
  for (int64_t j = 0; j < L; ++j) top = std::max(top, row[j]);
  for (int64_t j = 0; j < L; ++j) row[j] = exp_nonpositive(row[j] - top);
  T z = 0;
  for (int64_t j = 0; j < L; ++j) z += row[j];
  const T inv = T(1) / z;
  for (int64_t j = 0; j < L; ++j) row[j] *= inv;
}

// attention_rows for full attention (W = L), the (sequence, head) tasks [begin, end).
template <typename T>
LOOPLAB_CLONES void full_attention(const AttentionRows<T>& a, int64_t begin, int64_t end) {
  const int64_t d = a.d, H = a.heads, hd = d / H, L = a.L, Lp = keys_padded(L);
  std::vector<T> kt(hd * Lp), s(kRows * Lp), dropped(kRows * hd);
  for (int64_t task = begin; task < end; ++task) {
    const int64_t b = task / H, h = task % H;
    // This head's q of the sequence's row j: qkv_bh + j * 3d; its k: + d; its v: + 2d.
    const T* qkv_bh = a.qkv + b * L * 3 * d + h * hd;
    transpose_rows(qkv_bh + d, 3 * d, L, hd, Lp, kt.data());
    for (int64_t i0 = 0; i0 < L; i0 += kRows) {
      rows_times_transposed(block_rows(qkv_bh, 3 * d, i0, L), kt.data(), hd, Lp, s.data());
      std::array<T*, kRows> o;
      for (int64_t r = 0; r < kRows; ++r) {
        T* row = s.data() + r * Lp;
        softmax_row(row, L, a.scale);
        const int64_t i = b * L + i0 + r;
        o[r] = i0 + r < L ? a.out + i * d + h * hd : dropped.data() + r * hd;
        std::fill(o[r], o[r] + hd, T(0));
        if (a.probs && i0 + r < L) std::memcpy(a.probs + (i * H + h) * L, row, L * sizeof(T));
      }
      rows_times(s.data(), Lp, qkv_bh + 2 * d, 3 * d, L, hd, o);
    }
  }
}

// attention_rows_backward for full attention (W = L), the (sequence, head) tasks [begin, end):
// by blocks of kRows queries dp = da V^T, ds from it, dq = ds K; then by the same blocks, dk
// += ds^T q and dv += p^T da over every key.
template <typename T>
LOOPLAB_CLONES void full_attention_backward(const AttentionRowsBackward<T>& a, int64_t begin, int64_t end) {
  const int64_t d = a.d, H = a.heads, hd = d / H, L = a.L, Lp = keys_padded(L);
  const int64_t Lr = (L + kRows - 1) / kRows * kRows;
  std::vector<T> vt(hd * Lp), ds(Lr * Lp), p(Lr * Lp), dropped(kRows * hd);
  for (int64_t task = begin; task < end; ++task) {
    const int64_t b = task / H, h = task % H;
    const T* qkv_bh = a.qkv + b * L * 3 * d + h * hd;  // as in full_attention
    const T* da = a.dout + b * L * d + h * hd;
    T* dqkv_bh = a.dqkv + b * L * 3 * d + h * hd;
    transpose_rows(qkv_bh + 2 * d, 3 * d, L, hd, Lp, vt.data());
    std::fill(ds.begin(), ds.end(), T(0));
    std::fill(p.begin(), p.end(), T(0));
    for (int64_t i0 = 0; i0 < L; i0 += kRows) {
      T* ds_block = ds.data() + i0 * Lp;  // dp first, then ds in place
      rows_times_transposed(block_rows(da, d, i0, L), vt.data(), hd, Lp, ds_block);
      std::array<T*, kRows> dq;
      for (int64_t r = 0; r < kRows; ++r) {
        T* row = ds_block + r * Lp;
        if (i0 + r >= L) {
          std::fill(row, row + Lp, T(0));
          dq[r] = dropped.data() + r * hd;
          continue;
        }
        T* pr = p.data() + (i0 + r) * Lp;
        std::memcpy(pr, a.probs + ((b * L + i0 + r) * H + h) * L, L * sizeof(T));
        T mean = 0;
        for (int64_t j = 0; j < L; ++j) mean += pr[j] * row[j];
        for (int64_t j = 0; j < L; ++j) row[j] = pr[j] * (row[j] - mean) * a.scale;
        dq[r] = dqkv_bh + (i0 + r) * 3 * d;
      }
      rows_times(ds_block, Lp, qkv_bh + d, 3 * d, L, hd, dq);
    }
    // dk_j += sum_i ds[i][j] q_i and dv_j += sum_i p[i][j] da_i: the queries kRows at a time
    // (rows past L have zero ds and p), every key j inside, a head's values a vector at a time.
    for (int64_t i0 = 0; i0 < L; i0 += kRows) {
      const auto qs = block_rows(qkv_bh, 3 * d, i0, L);
      const auto das = block_rows(da, d, i0, L);
      const T* ds_block = ds.data() + i0 * Lp;
      const T* p_block = p.data() + i0 * Lp;
      int64_t t0 = 0;
      for (; t0 + kLanes<T> <= hd; t0 += kLanes<T>) {
        Vec<T> qv[kRows], av[kRows];
        for (int64_t r = 0; r < kRows; ++r) qv[r] = load(qs[r] + t0), av[r] = load(das[r] + t0);
        for (int64_t j = 0; j < L; ++j) {
          T* dk = dqkv_bh + j * 3 * d + d + t0;
          T* dv = dk + d;
          Vec<T> gk = load(dk), gv = load(dv);
          for (int64_t r = 0; r < kRows; ++r) gk += ds_block[r * Lp + j] * qv[r], gv += p_block[r * Lp + j] * av[r];
          store(dk, gk), store(dv, gv);
        }
      }
      for (int64_t j = 0; j < L; ++j)  // the rest of a head that is not a whole number of vectors
        for (int64_t t = t0; t < hd; ++t)
          for (int64_t r = 0; r < kRows; ++r) {
            dqkv_bh[j * 3 * d + d + t] += ds_block[r * Lp + j] * qs[r][t];
            dqkv_bh[j * 3 * d + 2 * d + t] += p_block[r * Lp + j] * das[r][t];
          }
    }
  }
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

// True where every query of the L positions sees every position in order (full attention):
// keys [L, L] = arange on every row.
bool every_key(const torch::Tensor& keys, int64_t L) {
  if (keys.size(0) != L || keys.size(1) != L) return false;
  const int64_t* k = keys.data_ptr<int64_t>();
  for (int64_t i = 0; i < L; ++i)
    for (int64_t j = 0; j < L; ++j)
      if (k[i * L + j] != j) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Running rows in parallel

// Rows [0, n) in parallel, a few hundred at a time.
template <typename F>
void each_row(int64_t n, const F& f) {
  at::parallel_for(0, n, 128, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) f(i);
  });
}

// Rows in fixed chunks, f(begin, end, chunk): per-chunk partial sums (weight gradients) are
// then added in chunk order, so the result does not depend on the number of threads.
constexpr int64_t kChunk = 256;
inline int64_t chunks(int64_t n) { return (n + kChunk - 1) / kChunk; }

template <typename F>
void each_chunk(int64_t n, const F& f) {
  at::parallel_for(0, chunks(n), 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) f(c * kChunk, std::min(n, (c + 1) * kChunk), c);
  });
}

template <typename T>
const T* data(const torch::Tensor& t) {
  return t.defined() ? t.data_ptr<T>() : nullptr;
}

// ---------------------------------------------------------------------------------------------
// The dense products, row-major: oneDNN's sgemm for float32 where it was found at build time
// (CMakeLists.txt: 1.5-2.5x OpenBLAS's rate at these thin shapes), ATen's otherwise.

#ifdef LOOPLAB_HAVE_DNNL
// LOOPLAB_DNNL=off sends the products to ATen's BLAS instead (OpenBLAS with Debian's LibTorch,
// MKL inside the PyTorch wheel's): for measuring the one against the other in one build.
bool use_dnnl() {
  static const bool on = [] {
    const char* e = std::getenv("LOOPLAB_DNNL");
    return !(e && std::strcmp(e, "off") == 0);
  }();
  return on;
}
#endif

// op(A) op(B) (+ bias on every row), op transposing where asked.
torch::Tensor product(const torch::Tensor& A, bool ta, const torch::Tensor& B, bool tb,
                      const torch::Tensor& bias = {}) {
  [[maybe_unused]] const int64_t m = A.size(ta ? 1 : 0), k = A.size(ta ? 0 : 1), n = B.size(tb ? 0 : 1);
#ifdef LOOPLAB_HAVE_DNNL
  if (A.scalar_type() == torch::kFloat32 && use_dnnl()) {
    torch::Tensor C = bias.defined() ? bias.expand({m, n}).contiguous() : torch::empty({m, n}, A.options());
    const torch::Tensor a = A.contiguous(), b = B.contiguous();
    if (dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a.data_ptr<float>(), ta ? m : k,
                   b.data_ptr<float>(), tb ? k : n, bias.defined() ? 1.0f : 0.0f, C.data_ptr<float>(),
                   n) == dnnl_success)
      return C;
  }
#endif
  const torch::Tensor a = ta ? A.t() : A, b = tb ? B.t() : B;
  return bias.defined() ? at::addmm(bias, a, b) : at::mm(a, b);
}

// x W^T + b: x [N, K], W [M, K], b [M].
torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& W, const torch::Tensor& b) {
  return product(x, false, W, true, b);
}

// dy^T x: the weight gradient of a linear layer, dy [N, M], x [N, K] -> [M, K].
torch::Tensor weight_gradient(const torch::Tensor& dy, const torch::Tensor& x) { return product(dy, true, x, false); }

// dy W: the input gradient of a linear layer, dy [N, M], W [M, K] -> [N, K].
torch::Tensor input_gradient(const torch::Tensor& dy, const torch::Tensor& W) { return product(dy, false, W, false); }

// ---------------------------------------------------------------------------------------------
// The block as plain tensors

// The tensors one block call reads, by slot; absent pieces stay undefined.
enum Slot : int {
  kX, kWh,  // the state and Wh x0
  kWxW, kWxB, kQkvW, kQkvB, kQNorm, kKNorm, kOutW, kOutB, kFc1W, kFc1B, kFc2W, kFc2B, kPreW, kPeriW, kPostW,
  kSlots
};
using Slots = std::array<torch::Tensor, kSlots>;

struct Shape {
  int64_t B, L, d, heads;
  bool external, internal;
};

const torch::nn::LinearImpl& linear(const torch::nn::Sequential& s, size_t i) {
  return *s->ptr(i)->as<torch::nn::LinearImpl>();
}

Slots slots_of(const BlockImpl& b, const torch::Tensor& x, const torch::Tensor& wh_x0) {
  Slots s;
  s[kX] = x;
  const bool recall = b.recall_kind == Recall::kExternal || b.recall_kind == Recall::kInternal;
  if (recall) {
    s[kWh] = wh_x0;
    s[kWxW] = b.Wx->weight;
    s[kWxB] = b.Wx->bias;
  }
  s[kQkvW] = b.attn->qkv->weight, s[kQkvB] = b.attn->qkv->bias;
  s[kQNorm] = b.attn->q_norm->weight, s[kKNorm] = b.attn->k_norm->weight;
  s[kOutW] = b.attn->out_proj->weight, s[kOutB] = b.attn->out_proj->bias;
  const auto &fc1 = linear(b.mlp, 0), &fc2 = linear(b.mlp, 2);
  s[kFc1W] = fc1.weight, s[kFc1B] = fc1.bias, s[kFc2W] = fc2.weight, s[kFc2B] = fc2.bias;
  if (b.pre_norm_func) s[kPreW] = b.pre_norm_func->weight;
  if (b.peri_norm_func) s[kPeriW] = b.peri_norm_func->weight;
  if (b.post_norm_func) s[kPostW] = b.post_norm_func->weight;
  return s;
}

// What the backward needs from the forward ([N, *] each; undefined where a piece is absent).
struct Saved {
  torch::Tensor x, r, n1, u, qkv_raw, qkv, probs, att, zpre, s, z, n2, u2, h, g, m, s2;
};

// Each piece of Saved by its key in the autograd context.
struct SavedPiece {
  const char* name;
  torch::Tensor Saved::*member;
};
constexpr SavedPiece kSavedPieces[] = {
    {"x", &Saved::x},       {"r", &Saved::r},   {"n1", &Saved::n1},     {"u", &Saved::u},   {"qkv_raw", &Saved::qkv_raw},
    {"qkv", &Saved::qkv},   {"probs", &Saved::probs}, {"att", &Saved::att}, {"zpre", &Saved::zpre}, {"s", &Saved::s},
    {"z", &Saved::z},       {"n2", &Saved::n2}, {"u2", &Saved::u2},     {"h", &Saved::h},   {"g", &Saved::g},
    {"m", &Saved::m},       {"s2", &Saved::s2}};

template <typename T>
torch::Tensor forward_rows(const Slots& w, const Shape& sh, const Positions& p, Saved* save) {
  const int64_t L = sh.L, d = sh.d, N = sh.B * sh.L, H = sh.heads, hd = d / H;
  const torch::Tensor x = w[kX].contiguous().view({N, d});
  const torch::Tensor wh = w[kWh].defined() ? w[kWh].contiguous().view({N, d}) : torch::Tensor();
  const T* WH = data<T>(wh);
  const T *pre_w = data<T>(w[kPreW]), *peri_w = data<T>(w[kPeriW]), *post_w = data<T>(w[kPostW]);
  // With saving, the output is a tensor of its own (autograd's output may not be a view).
  const torch::Tensor result = save ? torch::empty({sh.B, L, d}, x.options()) : torch::Tensor();

  // The sublayer's input: n = preN(r), u = g(n, x0) = Wx n + Wh x0 for internal recall, else n.
  auto sublayer_input = [&](const torch::Tensor& r, torch::Tensor& n) {
    n = r;
    if (pre_w) {
      n = torch::empty_like(r);
      const T* R = data<T>(r);
      T* Nn = n.data_ptr<T>();
      each_row(N, [&](int64_t i) { rms_row(R + i * d, pre_w, Nn + i * d, d); });
    }
    if (!sh.internal) return n;
    torch::Tensor u = linear(n, w[kWxW], w[kWxB]);
    T* U = u.data_ptr<T>();
    each_row(N, [&](int64_t i) {
      for (int64_t c = 0; c < d; ++c) U[i * d + c] += WH[i * d + c];
    });
    return u;
  };
  // out = postN(r + periN(y)): in place in y without saving; else into `out`, r + periN(y) in s.
  auto sublayer_output = [&](const torch::Tensor& r, torch::Tensor& y, torch::Tensor out, torch::Tensor* s) {
    if (!save) out = y;
    if (save && post_w) *s = torch::empty_like(r);
    const T *R = data<T>(r), *Y = data<T>(y);
    T* O = out.data_ptr<T>();
    T* S = save && post_w ? s->data_ptr<T>() : nullptr;
    each_row(N, [&](int64_t i) {
      T* o = O + i * d;
      if (peri_w)
        rms_row(Y + i * d, peri_w, o, d);
      else if (o != Y + i * d)
        std::memcpy(o, Y + i * d, d * sizeof(T));
      for (int64_t c = 0; c < d; ++c) o[c] += R[i * d + c];
      if (post_w) {
        if (S) std::memcpy(S + i * d, o, d * sizeof(T));
        rms_row(o, post_w, o, d);
      }
    });
    return out;
  };

  // --- Attention sublayer ---------------------------------------------------------------------
  torch::Tensor r = x;
  if (sh.external) {
    r = linear(x, w[kWxW], w[kWxB]);
    T* Rw = r.data_ptr<T>();
    each_row(N, [&](int64_t i) {
      for (int64_t c = 0; c < d; ++c) Rw[i * d + c] += WH[i * d + c];
    });
  }
  torch::Tensor n1;
  const torch::Tensor u = sublayer_input(r, n1);
  const torch::Tensor qkv_raw = linear(u, w[kQkvW], w[kQkvB]);  // [N, 3d]: q, k, v, heads inside
  const torch::Tensor qkv = save ? torch::empty_like(qkv_raw) : qkv_raw;
  {
    const torch::Tensor cos = p.cos.contiguous(), sin = p.sin.contiguous();
    RopeRows<T> a;
    a.in = data<T>(qkv_raw), a.out = qkv.data_ptr<T>();
    a.cos = data<T>(cos), a.sin = data<T>(sin);
    a.q_norm = data<T>(w[kQNorm]), a.k_norm = data<T>(w[kKNorm]);
    a.L = L, a.d = d, a.heads = H;
    at::parallel_for(0, N, 64, [&](int64_t begin, int64_t end) { rope_rows(a, begin, end); });
  }
  const torch::Tensor keys = p.keys.contiguous();
  const int64_t W = keys.size(1);
  torch::Tensor att = torch::empty({N, d}, x.options());
  const torch::Tensor probs = save ? torch::empty({N, H, W}, x.options()) : torch::Tensor();
  {
    AttentionRows<T> a;
    a.qkv = data<T>(qkv);
    a.keys = keys.data_ptr<int64_t>();
    a.out = att.data_ptr<T>();
    a.probs = save ? probs.data_ptr<T>() : nullptr;
    a.L = L, a.d = d, a.heads = H, a.W = W;
    a.scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(hd)));
    if (every_key(keys, L))
      at::parallel_for(0, sh.B * H, 1, [&](int64_t begin, int64_t end) { full_attention(a, begin, end); });
    else
      at::parallel_for(0, N, 64, [&](int64_t begin, int64_t end) { attention_rows(a, begin, end); });
  }
  torch::Tensor zpre = linear(att, w[kOutW], w[kOutB]);
  torch::Tensor s;
  const torch::Tensor z = sublayer_output(r, zpre, save ? torch::empty_like(zpre) : torch::Tensor(), &s);

  // --- MLP sublayer ---------------------------------------------------------------------------
  // (Tiling it so that the 4x wider hidden layer stays in cache measured slower here: the
  // products lose more at 128-row tiles than the passes gain.)
  torch::Tensor n2;
  const torch::Tensor u2 = sublayer_input(z, n2);
  torch::Tensor h = linear(u2, w[kFc1W], w[kFc1B]);
  const torch::Tensor g = save ? at::gelu(h) : at::gelu_(h);
  torch::Tensor m = linear(g, w[kFc2W], w[kFc2B]);
  torch::Tensor s2;
  const torch::Tensor out = sublayer_output(z, m, save ? result.view({N, d}) : torch::Tensor(), &s2);
  if (save) {
    // The outputs of the two last products are needed only for the peri-norm's gradient.
    if (!peri_w) zpre = m = torch::Tensor();
    *save = Saved{x, r, n1, u, qkv_raw, qkv, probs, att, zpre, s, z, n2, u2, h, g, m, s2};
    return result;
  }
  return out.view({sh.B, L, d});
}

// ---------------------------------------------------------------------------------------------
// Without gradient: the block by tiles of whole sequences

// forward_rows' passes each read and write the whole batch ([N, 4d] for the MLP's hidden layer:
// 52 MB at 100 x 512 positions and width 64), so every pass runs from memory and every pass
// between two products is a parallel region of its own. Without gradient nothing has to outlive
// the iteration: here each thread runs the whole block on a tile of whole sequences (attention
// never looks outside a sequence) with its products single-threaded, so a tile's intermediates
// stay in the core's cache, the buffers are reused from tile to tile, and an iteration is one
// parallel region. The arithmetic is forward_rows', in the same order.

// About this many rows per tile: a tile's buffers (~11 d floats a row) then fit in a 1-2 MB L2
// at width 64-128, and the products still have rows enough to run at their rate.
constexpr int64_t kTileRows = 512;

// C [m, n] = A [m, k] W^T (+ b), W [n, k] and b [n] the layer's; single-threaded inside a tile.
template <typename T>
void tile_linear(const T* A, int64_t m, const torch::Tensor& W, const torch::Tensor& b, T* C) {
  const int64_t n = W.size(0), k = W.size(1);
  const T* bias = data<T>(b);
  if (bias)
    for (int64_t i = 0; i < m; ++i) std::memcpy(C + i * n, bias, n * sizeof(T));
#ifdef LOOPLAB_HAVE_DNNL
  if constexpr (std::is_same_v<T, float>) {
    // Inside a parallel region oneDNN (like OpenBLAS) runs on the calling thread alone.
    if (use_dnnl() && dnnl_sgemm('N', 'T', m, n, k, 1.0f, A, k, W.data_ptr<float>(), k, bias ? 1.0f : 0.0f, C, n) == dnnl_success)
      return;
  }
#endif
  const auto options = W.options();
  const torch::Tensor a = torch::from_blob(const_cast<T*>(A), {m, k}, options);
  torch::Tensor c = torch::from_blob(C, {m, n}, options);
  if (bias)
    c.addmm_(a, W.t());
  else
    at::mm_out(c, a, W.t());
}

// Sequences per tile, or 0 where there are too few sequences to give every thread a tile (the
// row-parallel forward_rows then keeps both cores busy).
inline int64_t sequences_per_tile(int64_t B, int64_t L) {
  const int64_t threads = at::get_num_threads();
  if (B < threads) return 0;
  const int64_t want = std::max<int64_t>(1, (kTileRows + L - 1) / L);
  // At least two tiles a thread where the batch allows, so that a thread's share evens out.
  return std::max<int64_t>(1, std::min(want, B / (2 * threads)));
}

template <typename T>
torch::Tensor forward_tiles(const Slots& w, const Shape& sh, const Positions& p, int64_t per_tile) {
  const int64_t L = sh.L, d = sh.d, N = sh.B * L, H = sh.heads, hd = d / H;
  const int64_t hidden = w[kFc1W].size(0);
  const torch::Tensor x = w[kX].contiguous().view({N, d});
  const torch::Tensor wh = w[kWh].defined() ? w[kWh].contiguous().view({N, d}) : torch::Tensor();
  const T *X = data<T>(x), *WH = data<T>(wh);
  const T *pre_w = data<T>(w[kPreW]), *peri_w = data<T>(w[kPeriW]), *post_w = data<T>(w[kPostW]);
  const torch::Tensor cos = p.cos.contiguous(), sin = p.sin.contiguous(), keys = p.keys.contiguous();
  const int64_t W = keys.size(1);
  const bool full = every_key(keys, L);
  const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(hd)));
  torch::Tensor result = torch::empty({sh.B, L, d}, x.options());
  T* OUT = result.data_ptr<T>();
  const int64_t tiles = (sh.B + per_tile - 1) / per_tile;

  at::parallel_for(0, tiles, 1, [&](int64_t tile_begin, int64_t tile_end) {
    // One thread's buffers, for every tile of its share: r, n, u, att, y and z of d values a
    // row, qkv of 3d, the hidden layer's.
    // Kept from call to call (a thread of the pool lives on), so no iteration pays for fresh pages.
    const int64_t max_rows = per_tile * L;
    thread_local std::vector<T> buffer;
    if (buffer.size() < static_cast<size_t>(max_rows * (9 * d + hidden))) buffer.resize(max_rows * (9 * d + hidden));
    T *R_buf = buffer.data(), *Nb = R_buf + max_rows * d, *Ub = Nb + max_rows * d, *QKV = Ub + max_rows * d,
      *ATT = QKV + max_rows * 3 * d, *Y = ATT + max_rows * d, *Z = Y + max_rows * d, *Hb = Z + max_rows * d;
    for (int64_t tile = tile_begin; tile < tile_end; ++tile) {
      const int64_t row0 = tile * per_tile * L;
      const int64_t seqs = std::min(per_tile, sh.B - tile * per_tile), rows = seqs * L;
      const T* xt = X + row0 * d;
      const T* wht = WH ? WH + row0 * d : nullptr;
      T* out = OUT + row0 * d;
      // += Wh x0, row by row.
      auto add_recall = [&](T* v) {
        for (int64_t i = 0; i < rows * d; ++i) v[i] += wht[i];
      };
      // The sublayer's input (forward_rows' sublayer_input): preN(r), then g(n, x0) for internal
      // recall.
      auto sublayer_input = [&](const T* r) {
        const T* n = r;
        if (pre_w) {
          for (int64_t i = 0; i < rows; ++i) rms_row(r + i * d, pre_w, Nb + i * d, d);
          n = Nb;
        }
        if (!sh.internal) return n;
        tile_linear(n, rows, w[kWxW], w[kWxB], Ub);
        add_recall(Ub);
        return static_cast<const T*>(Ub);
      };
      // o = postN(r + periN(y)) (forward_rows' sublayer_output); y may be overwritten.
      auto sublayer_output = [&](const T* r, T* y, T* o) {
        for (int64_t i = 0; i < rows; ++i) {
          T* oi = o + i * d;
          if (peri_w)
            rms_row(y + i * d, peri_w, oi, d);
          else
            std::memcpy(oi, y + i * d, d * sizeof(T));
          for (int64_t c = 0; c < d; ++c) oi[c] += r[i * d + c];
          if (post_w) rms_row(oi, post_w, oi, d);
        }
      };

      // --- Attention sublayer -----------------------------------------------------------------
      const T* r = xt;
      if (sh.external) {
        tile_linear(xt, rows, w[kWxW], w[kWxB], R_buf);
        add_recall(R_buf);
        r = R_buf;
      }
      tile_linear(sublayer_input(r), rows, w[kQkvW], w[kQkvB], QKV);
      RopeRows<T> rope;
      rope.in = rope.out = QKV;
      rope.cos = data<T>(cos), rope.sin = data<T>(sin);
      rope.q_norm = data<T>(w[kQNorm]), rope.k_norm = data<T>(w[kKNorm]);
      rope.L = L, rope.d = d, rope.heads = H;
      rope_rows(rope, 0, rows);
      AttentionRows<T> a;
      a.qkv = QKV;
      a.keys = keys.data_ptr<int64_t>();
      a.out = ATT;
      a.probs = nullptr;
      a.L = L, a.d = d, a.heads = H, a.W = W;
      a.scale = scale;
      if (full)
        full_attention(a, 0, seqs * H);
      else
        attention_rows(a, 0, rows);
      tile_linear(ATT, rows, w[kOutW], w[kOutB], Y);
      sublayer_output(r, Y, Z);

      // --- MLP sublayer -----------------------------------------------------------------------
      tile_linear(sublayer_input(Z), rows, w[kFc1W], w[kFc1B], Hb);
      // LibTorch's vectorized GELU on the tile (serial here: it is inside a parallel region).
      torch::Tensor hidden_layer = torch::from_blob(Hb, {rows, hidden}, x.options());
      at::gelu_(hidden_layer);
      tile_linear(Hb, rows, w[kFc2W], w[kFc2B], Y);
      sublayer_output(Z, Y, out);
    }
  });
  return result;
}

// The gradients of one block call, by slot, given the gradient of its output.
template <typename T>
Slots backward_rows(const Slots& w, const Shape& sh, const torch::Tensor& cos_in, const torch::Tensor& sin_in,
                    const torch::Tensor& keys_in, const Saved& sv, const torch::Tensor& dout_in, bool need_dx) {
  const int64_t L = sh.L, d = sh.d, N = sh.B * sh.L, H = sh.heads, hd = d / H;
  const T *pre_w = data<T>(w[kPreW]), *peri_w = data<T>(w[kPeriW]), *post_w = data<T>(w[kPostW]);
  Slots grad;
  auto add = [&](Slot slot, const torch::Tensor& g) {
    if (grad[slot].defined())
      grad[slot].add_(g);
    else
      grad[slot] = g;
  };
  // A weight's gradient summed over chunks of rows, in chunk order.
  auto partial = [&](const T* weight, int64_t width) {
    return weight ? torch::zeros({chunks(N), width}, sv.x.options()) : torch::Tensor();
  };
  auto row_of = [&](const torch::Tensor& part, int64_t chunk, int64_t width) -> T* {
    return part.defined() ? part.data_ptr<T>() + chunk * width : nullptr;
  };
  // The linear layer y = x W^T + b: dW += dy^T x, db += sum dy; returns dx = dy W.
  auto linear_backward = [&](const torch::Tensor& dy, const torch::Tensor& x, Slot weight, Slot bias, bool dx) {
    add(weight, weight_gradient(dy, x));
    add(bias, dy.sum(0));
    return dx ? input_gradient(dy, w[weight]) : torch::Tensor();
  };
  // out = postN(s), s = r + periN(y): returns {ds (the residual's gradient), dy}. dout may be
  // overwritten only when `own` says it is this function's buffer.
  auto output_backward = [&](const torch::Tensor& dout, bool own, const torch::Tensor& s, const torch::Tensor& y) {
    // ds gathers more gradients later (input_backward adds into it): the post-norm writes a new
    // buffer; without one it is dout itself, copied unless dout is ours to overwrite.
    torch::Tensor ds;
    if (post_w)
      ds = torch::empty_like(dout);
    else
      ds = own ? dout : dout.clone();
    const torch::Tensor dy = peri_w ? torch::empty_like(dout) : ds;
    if (!post_w && !peri_w) return std::make_pair(ds, dy);
    const torch::Tensor dpost = partial(post_w, d), dperi = partial(peri_w, d);
    const T *DO = data<T>(dout), *S = data<T>(s), *Y = data<T>(y);
    T *DS = ds.data_ptr<T>(), *DY = dy.data_ptr<T>();
    each_chunk(N, [&](int64_t begin, int64_t end, int64_t chunk) {
      for (int64_t i = begin; i < end; ++i) {
        if (post_w) rms_row_backward(S + i * d, post_w, DO + i * d, DS + i * d, false, row_of(dpost, chunk, d), d);
        if (peri_w) rms_row_backward(Y + i * d, peri_w, DS + i * d, DY + i * d, false, row_of(dperi, chunk, d), d);
      }
    });
    if (post_w) add(kPostW, dpost.sum(0));
    if (peri_w) add(kPeriW, dperi.sum(0));
    return std::make_pair(ds, dy);
  };
  // u = g(n, x0) (internal recall) or n, n = preN(r) or r: adds the gradient of r to dr.
  auto input_backward = [&](const torch::Tensor& du, const torch::Tensor& n, const torch::Tensor& r,
                            const torch::Tensor& dr) {
    torch::Tensor dn = du;
    if (sh.internal) {
      add(kWh, du);
      dn = linear_backward(du, n, kWxW, kWxB, true);
    }
    if (!pre_w) {
      dr.add_(dn);
      return;
    }
    const torch::Tensor dpre = partial(pre_w, d);
    const T *R = data<T>(r), *DN = data<T>(dn);
    T* DR = dr.data_ptr<T>();
    each_chunk(N, [&](int64_t begin, int64_t end, int64_t chunk) {
      for (int64_t i = begin; i < end; ++i)
        rms_row_backward(R + i * d, pre_w, DN + i * d, DR + i * d, true, row_of(dpre, chunk, d), d);
    });
    add(kPreW, dpre.sum(0));
  };

  // --- MLP sublayer ---------------------------------------------------------------------------
  const torch::Tensor dout = dout_in.contiguous().view({N, d});
  auto [dz, dm] = output_backward(dout, false, sv.s2, sv.m);
  const torch::Tensor dg = linear_backward(dm, sv.g, kFc2W, kFc2B, true);
  const torch::Tensor dh = at::gelu_backward(dg, sv.h);
  input_backward(linear_backward(dh, sv.u2, kFc1W, kFc1B, true), sv.n2, sv.z, dz);

  // --- Attention sublayer ---------------------------------------------------------------------
  auto [dr, dzpre] = output_backward(dz, true, sv.s, sv.zpre);
  const torch::Tensor datt = linear_backward(dzpre, sv.att, kOutW, kOutB, true);
  const torch::Tensor dqkv = torch::zeros({N, 3 * d}, datt.options());
  const torch::Tensor keys = keys_in.contiguous(), cos = cos_in.contiguous(), sin = sin_in.contiguous();
  {
    AttentionRowsBackward<T> a;
    a.qkv = data<T>(sv.qkv);
    a.keys = keys.data_ptr<int64_t>();
    a.probs = data<T>(sv.probs);
    a.dout = data<T>(datt);
    a.dqkv = dqkv.data_ptr<T>();
    a.L = L, a.d = d, a.heads = H, a.W = keys.size(1);
    a.scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(hd)));
    if (every_key(keys, L))
      at::parallel_for(0, sh.B * H, 1, [&](int64_t begin, int64_t end) { full_attention_backward(a, begin, end); });
    else
      at::parallel_for(0, sh.B, 1, [&](int64_t begin, int64_t end) { attention_rows_backward(a, begin, end); });
  }
  {
    const torch::Tensor dqn = partial(data<T>(w[kQNorm]), hd), dkn = partial(data<T>(w[kKNorm]), hd);
    RopeRowsBackward<T> a;
    a.raw = data<T>(sv.qkv_raw);
    a.dqkv = dqkv.data_ptr<T>();
    a.cos = data<T>(cos), a.sin = data<T>(sin);
    a.q_norm = data<T>(w[kQNorm]), a.k_norm = data<T>(w[kKNorm]);
    a.L = L, a.d = d, a.heads = H;
    each_chunk(N, [&](int64_t begin, int64_t end, int64_t chunk) {
      rope_rows_backward(a, begin, end, row_of(dqn, chunk, hd), row_of(dkn, chunk, hd));
    });
    add(kQNorm, dqn.sum(0));
    add(kKNorm, dkn.sum(0));
  }
  input_backward(linear_backward(dqkv, sv.u, kQkvW, kQkvB, true), sv.n1, sv.r, dr);

  // --- The external recall r = Wx x + Wh x0 ---------------------------------------------------
  torch::Tensor dx = dr;
  if (sh.external) {
    add(kWh, dr);
    dx = linear_backward(dr, sv.x, kWxW, kWxB, need_dx);
  }
  if (dx.defined()) grad[kX] = dx.view({sh.B, L, d});
  if (grad[kWh].defined()) grad[kWh] = grad[kWh].view({sh.B, L, d});
  return grad;
}

// ---------------------------------------------------------------------------------------------
// The autograd node

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
                                                    int64_t{shape->external}, int64_t{shape->internal}};
    ctx->saved_data["cos"] = p->cos;
    ctx->saved_data["sin"] = p->sin;
    ctx->saved_data["keys"] = p->keys;
    for (const auto& [name, member] : kSavedPieces)
      if ((saved.*member).defined()) ctx->saved_data[name] = saved.*member;
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    if (torch::GradMode::is_enabled())
      throw Error("the fused block's backward is not differentiable: build graphs for double backward inside a "
                  "PlainEngine scope (model/fused_block.h)");
    const auto inputs = ctx->get_saved_variables();
    const auto present = ctx->saved_data["slots"].toIntVector();
    const auto s = ctx->saved_data["shape"].toIntVector();
    const Shape shape{s[0], s[1], s[2], s[3], s[4] != 0, s[5] != 0};
    Slots slots;
    for (size_t i = 0; i < present.size(); ++i) slots[present[i]] = inputs[i];
    Saved saved;
    for (const auto& [name, member] : kSavedPieces) {
      auto it = ctx->saved_data.find(name);
      if (it != ctx->saved_data.end()) saved.*member = it->second.toTensor();
    }
    // Unset pieces alias the tensors they stand for (n = r without pre-norm, u = n without
    // internal recall), as in the forward.
    const torch::Tensor cos = ctx->saved_data["cos"].toTensor(), sin = ctx->saved_data["sin"].toTensor(),
                        keys = ctx->saved_data["keys"].toTensor();
    const torch::Tensor dout = grads[0].defined() ? grads[0] : torch::zeros_like(inputs[0]);
    const bool need_dx = ctx->needs_input_grad(0);
    const Slots g = inputs[0].scalar_type() == torch::kFloat64
                        ? backward_rows<double>(slots, shape, cos, sin, keys, saved, dout, need_dx)
                        : backward_rows<float>(slots, shape, cos, sin, keys, saved, dout, need_dx);
    torch::autograd::variable_list out;
    for (int64_t slot : present) out.push_back(g[slot]);
    out.resize(out.size() + 3);  // none for forward's three other arguments
    return out;
  }
};

}  // namespace

void tile_linear(const float* A, int64_t m, const torch::Tensor& W, const torch::Tensor& b, float* C) {
  tile_linear<float>(A, m, W, b, C);
}

bool fused_block_applies(const BlockImpl& block, const torch::Tensor& x, const Positions& p) {
  const auto t = x.scalar_type();
  return !plain_engine() && block.attn->fused && x.device().is_cpu() && !autocast_enabled(c10::DeviceType::CPU) && (t == torch::kFloat32 || t == torch::kFloat64) &&
         x.dim() == 3 && p.keys.defined() && !block.gru && block.attn->qkv->weight.scalar_type() == t &&
         p.cos.scalar_type() == t && x.size(2) <= kMaxWidth && block.attn->heads <= kMaxHeads &&
         p.keys.size(1) <= kMaxWindow;
}

torch::Tensor fused_block_forward(const BlockImpl& b, const torch::Tensor& x, const torch::Tensor& wh_x0,
                                  const Positions& p) {
  const Slots slots = slots_of(b, x, wh_x0);
  const Shape shape{x.size(0), x.size(1), x.size(2), b.attn->heads, b.recall_kind == Recall::kExternal,
                    b.recall_kind == Recall::kInternal};
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

}  // namespace looplab
