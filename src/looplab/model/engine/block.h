// The fused engine's block, inside the engine (engine.cpp calls it; nothing else includes this):
// the block's tensors by slot, what its backward keeps from its forward, the row helpers that
// the row forward (block.cpp) and the tiled forward (block_tiles.cpp) share, and the three
// drivers. Shapes: B sequences of L tokens, N = B * L rows, width d, H heads of hd = d / H.
#pragma once

#include <torch/torch.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "looplab/model/engine/kernels.h"

namespace looplab {
struct Positions;
}

namespace looplab::engine {

// The tensors one block call reads, by slot; absent pieces stay undefined.
enum Slot : int {
  kX, kWh,  // the state x [B, L, d] and the recall's Wh x0 [B, L, d]
  kWxW, kWxB, kQkvW, kQkvB, kQNorm, kKNorm, kOutW, kOutB, kFc1W, kFc1B, kFc2W, kFc2B, kPreW, kPeriW, kPostW,
  kSlots
};
using Slots = std::array<torch::Tensor, kSlots>;

struct Shape {
  int64_t B, L, d, heads;
  bool external, internal;  // the recall's kind (none and fixed: neither)
  // bf16-mixed (float only): every product's activation operand rounded to bfloat16 and the
  // weights' bfloat16 copies (products.h), float32 accumulation and output; all else float32.
  bool bf16 = false;
};

// One sublayer's rows that its backward needs, each [N, d]:
//   residual  r, the stream the sublayer adds to;
//   normed    n = preN(r) (r itself without pre-norm);
//   input     u = Wx n + Wh x0 with internal recall, else n (the qkv or fc1 product's operand:
//             bfloat16 under bf16-mixed, as are normed with internal recall, x with external
//             recall, mixed and hidden, which only their products' weight gradients read);
//   output    y, the sublayer's own output (out_proj's or fc2's), kept only with peri-norm;
//   sum       r + periN(y) before the post-norm, kept only with post-norm.
// The sublayer's result is postN(sum).
struct SublayerSaved {
  torch::Tensor residual, normed, input, output, sum;
};

// What the backward needs from the forward (undefined where a piece is absent).
struct Saved {
  torch::Tensor x;               // [N, d] the block's input state
  SublayerSaved attention, mlp;  // mlp.residual is the attention sublayer's result
  torch::Tensor qkv_projected;   // [N, 3d] the qkv product
  torch::Tensor qkv;             // [N, 3d] after RoPE and QK-norm
  torch::Tensor probs;           // [N, H, W] the softmax weights
  torch::Tensor mixed;           // [N, d] the heads' weighted values, out_proj's input
  torch::Tensor hidden_pre;      // [N, 4d] fc1's output
  torch::Tensor hidden;          // [N, 4d] GELU of it, fc2's input
};

// Every piece of a Saved by name (the autograd context stores them by these keys): one table,
// made once, of how to reach each piece from a Saved.
struct SavedPiece {
  std::string name;
  torch::Tensor Saved::*member = nullptr;        // a piece of Saved itself, or
  SublayerSaved Saved::*sublayer = nullptr;      // a piece of one of its sublayers
  torch::Tensor SublayerSaved::*sub_member = nullptr;
  torch::Tensor& of(Saved& s) const { return sublayer ? (s.*sublayer).*sub_member : s.*member; }
};
inline const std::vector<SavedPiece>& saved_pieces() {
  static const std::vector<SavedPiece> all = [] {
    std::vector<SavedPiece> v = {{"x", &Saved::x},         {"qkv_projected", &Saved::qkv_projected},
                                 {"qkv", &Saved::qkv},     {"probs", &Saved::probs},
                                 {"mixed", &Saved::mixed}, {"hidden_pre", &Saved::hidden_pre},
                                 {"hidden", &Saved::hidden}};
    for (auto [prefix, sub] : {std::make_pair("attention.", &Saved::attention), std::make_pair("mlp.", &Saved::mlp)})
      for (auto [name, member] : {std::make_pair("residual", &SublayerSaved::residual),
                                  std::make_pair("normed", &SublayerSaved::normed),
                                  std::make_pair("input", &SublayerSaved::input),
                                  std::make_pair("output", &SublayerSaved::output),
                                  std::make_pair("sum", &SublayerSaved::sum)})
        v.push_back({std::string(prefix) + name, nullptr, sub, member});
    return v;
  }();
  return all;
}

// ---------------------------------------------------------------------------------------------
// Helpers

template <typename T>
const T* data(const torch::Tensor& t) {
  return t.defined() ? t.data_ptr<T>() : nullptr;
}

// 1 / sqrt(hd), attention's scale.
template <typename T>
T attention_scale(int64_t hd) {
  return static_cast<T>(1.0 / std::sqrt(static_cast<double>(hd)));
}

// Rows [0, n) in parallel, a few hundred at a time.
template <typename F>
void each_row(int64_t n, const F& f) {
  at::parallel_for(0, n, 128, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) f(i);
  });
}

// Rows in fixed chunks, f(begin, end, chunk): per-chunk partial sums (weight gradients) are
// then added in chunk order, so the result does not depend on the number of threads.
inline constexpr int64_t kChunk = 256;
inline int64_t chunks(int64_t n) { return (n + kChunk - 1) / kChunk; }

template <typename F>
void each_chunk(int64_t n, const F& f) {
  at::parallel_for(0, chunks(n), 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) f(c * kChunk, std::min(n, (c + 1) * kChunk), c);
  });
}

// True where every query of the L positions sees every position in order (full attention):
// keys [L, L] = arange on every row.
bool every_key(const torch::Tensor& keys, int64_t L);

// The outer normalizations' weights [d], null where absent.
template <typename T>
struct Norms {
  const T *pre, *peri, *post;
};
template <typename T>
Norms<T> norms_of(const Slots& w) {
  return {data<T>(w[kPreW]), data<T>(w[kPeriW]), data<T>(w[kPostW])};
}

// ---------------------------------------------------------------------------------------------
// The row steps both forwards share (the arithmetic of looped_transformer.cpp's sublayer_step)

// v += a over one row of d values (the recall's Wh x0).
template <typename T>
inline void add_row(T* v, const T* a, int64_t d) {
  for (int64_t c = 0; c < d; ++c) v[c] += a[c];
}

// One row's sublayer result o = postN(r + periN(y)); sum (where given, with post-norm)
// receives r + periN(y). o may be y.
template <typename T>
inline void sublayer_output_row(const T* r, const T* y, T* o, T* sum, const Norms<T>& norms, int64_t d) {
  if (norms.peri)
    rms_row(y, norms.peri, o, d);
  else if (o != y)
    std::memcpy(o, y, d * sizeof(T));
  add_row(o, r, d);
  if (norms.post) {
    if (sum) std::memcpy(sum, o, d * sizeof(T));
    rms_row(o, norms.post, o, d);
  }
}

// ---------------------------------------------------------------------------------------------
// The drivers (T: float or double)

// The block on the whole batch, each pass parallel over rows; with `save`, also what the
// backward needs (block.cpp). Returns [B, L, d].
template <typename T>
torch::Tensor forward_rows(const Slots& w, const Shape& sh, const Positions& p, Saved* save);

// The gradients of one block call, by slot, given the gradient of its output [B, L, d]
// (block.cpp, beside forward_rows). The gradient of x only where need_dx.
template <typename T>
Slots backward_rows(const Slots& w, const Shape& sh, const Positions& p, const Saved& saved,
                    const torch::Tensor& dout, bool need_dx);

// Without gradient: each thread runs the whole block on tiles of `per_tile` whole sequences
// (block_tiles.cpp). Returns [B, L, d].
template <typename T>
torch::Tensor forward_tiles(const Slots& w, const Shape& sh, const Positions& p, int64_t per_tile);

// Sequences per tile for forward_tiles, or 0 where there are too few sequences to give every
// thread a tile (forward_rows then keeps every core busy).
int64_t sequences_per_tile(int64_t B, int64_t L);

}  // namespace looplab::engine
