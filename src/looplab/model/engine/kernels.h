// The fused engine's row kernels (model/engine/engine.h), torch-free: each kernel a function,
// its backward beside it, as llm.c writes them. They work on raw row-major arrays:
//   N = B * L rows (B sequences of L tokens), d the width, H heads of hd = d / H values,
//   qkv [N, 3d] (each row q, k, v, each of them the H heads' hd values in turn),
//   keys [L, W] (the W key positions each query position sees, within its own sequence).
// RMSNorm's row function is inline here (the block drivers call it row by row); the rest are
// defined in kernels.cpp (the windowed rows) and full_attention.cpp (W = L), compiled for
// AVX-512 and AVX2 beside baseline x86-64 (row_math.h's LOOPLAB_CLONES), float and double.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace looplab::engine {

// The engine's limits (model/engine/engine.h's allow-list checks them).
inline constexpr int64_t kMaxWidth = 1024, kMaxHeads = 64, kMaxWindow = 256;

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

// RoPE, then the per-head RMSNorm, of every q and k of the rows [begin, end) of qkv [N, 3d]
// (in: before, out: after; they may be the same buffer; v is copied when they differ).
template <typename T>
struct RopeRows {
  const T* in;
  T* out;
  const T *cos, *sin;  // [L, hd / 2]
  const T *q_norm, *k_norm;  // [hd]
  int64_t L, d, heads;
};
template <typename T>
void rope_rows(const RopeRows<T>& a, int64_t begin, int64_t end);

// The gradient of rope_rows: dqkv [N, 3d] holds the gradient of its q and k outputs and
// receives, in place, that of its inputs (v's passes through); dq_norm, dk_norm [hd]
// collect the norms' weight gradients of these rows.
template <typename T>
struct RopeRowsBackward {
  const T* raw;  // rope_rows' input [N, 3d]
  T* dqkv;       // [N, 3d]
  const T *cos, *sin, *q_norm, *k_norm;
  int64_t L, d, heads;
};
template <typename T>
void rope_rows_backward(const RopeRowsBackward<T>& a, int64_t begin, int64_t end, T* dq_norm, T* dk_norm);

// softmax(q k^T * scale) v over each query's W window keys, every head, rows [begin, end);
// the softmax weights are kept in probs [N, heads, W] where given (for the backward).
template <typename T>
struct AttentionRows {
  const T* qkv;         // [N, 3d]
  const int64_t* keys;  // [L, W]
  T* out;               // [N, d]
  T* probs;             // [N, heads, W] or null
  int64_t L, d, heads, W;
  T scale;
};
template <typename T>
void attention_rows(const AttentionRows<T>& a, int64_t begin, int64_t end);

// The gradient of attention_rows for the whole sequences [seq_begin, seq_end): with p the
// softmax weights and da the gradient of a query's output, dv_j += p_j da, ds_j = p_j (da.v_j -
// sum_l p_l da.v_l) * scale, dq += sum_j ds_j k_j, dk_j += ds_j q. A key's gradient gathers
// from the queries that see it, all in the same sequence: one sequence per task, no races.
template <typename T>
struct AttentionRowsBackward {
  const T* qkv;  // attention_rows' input [N, 3d]
  const int64_t* keys;
  const T* probs;  // [N, heads, W]
  const T* dout;   // [N, d]
  T* dqkv;         // [N, 3d], zero on entry
  int64_t L, d, heads, W;
  T scale;
};
template <typename T>
void attention_rows_backward(const AttentionRowsBackward<T>& a, int64_t seq_begin, int64_t seq_end);

// attention_rows for full attention (W = L, keys in order), the (sequence, head) tasks
// [begin, end) of B * heads (full_attention.cpp).
template <typename T>
void full_attention(const AttentionRows<T>& a, int64_t begin, int64_t end);
// attention_rows_backward for full attention, the (sequence, head) tasks [begin, end).
template <typename T>
void full_attention_backward(const AttentionRowsBackward<T>& a, int64_t begin, int64_t end);

// ---------------------------------------------------------------------------------------------
// bf16-mixed (float32 rows, bfloat16 operands as uint16 bit patterns; kernels.cpp)
//
// A product's operand is its float32 rows rounded to bfloat16 (to nearest even). Rounding in the
// pass that makes the rows, rather than in a pass of its own afterwards, spares a read of the
// float32 rows and, for the hidden layer, the float32 rows themselves.

// The gradient of a linear layer's output, dy [rows, m]: out = dy rounded (the products' operand),
// sums[c] += the sum of column c over the rows (the bias's gradient, from the float32 values).
void bf16_rows_and_column_sums(const float* dy, int64_t rows, int64_t m, uint16_t* out, float* sums);

// The MLP's hidden layer: out = GELU(h) rounded, h [rows, m] (GELU's exact form, row_math.h's
// gelu_erf).
void gelu_bf16_rows(const float* h, int64_t rows, int64_t m, uint16_t* out);
// Its backward into the next product's operand: g = dh GELU'(h), GELU'(h) = Phi(h) + h phi(h);
// out = g rounded, sums[c] += the sum of g's column c (fc1's bias gradient).
void gelu_backward_bf16_rows(const float* dh, const float* h, int64_t rows, int64_t m, uint16_t* out, float* sums);

}  // namespace looplab::engine
