// The fused engine's full-attention kernels (kernels.h): every query sees the same L keys, in
// order. Compiled with reordered additions, as kernels.cpp.
#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <vector>

#include "looplab/model/engine/kernels.h"
#include "looplab/model/engine/row_math.h"

namespace looplab::engine {


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

template void full_attention<float>(const AttentionRows<float>&, int64_t, int64_t);
template void full_attention<double>(const AttentionRows<double>&, int64_t, int64_t);
template void full_attention_backward<float>(const AttentionRowsBackward<float>&, int64_t, int64_t);
template void full_attention_backward<double>(const AttentionRowsBackward<double>&, int64_t, int64_t);

}  // namespace looplab::engine
