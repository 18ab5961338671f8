// The fused engine's block without gradient, by tiles of whole sequences.
//
// forward_rows' passes (block.cpp) each read and write the whole batch ([N, 4d] for the MLP's
// hidden layer: 52 MB at 100 x 512 positions and width 64), so every pass runs from memory and
// every pass between two products is a parallel region of its own. Without gradient nothing
// has to outlive the iteration: here each thread runs the whole block on a tile of whole
// sequences (attention never looks outside a sequence) with its products single-threaded, so a
// tile's intermediates stay in the core's cache, the buffers are reused from tile to tile, and
// an iteration is one parallel region. The arithmetic is forward_rows', in the same order, by
// the same row steps (block.h). Compiled with reordered additions, as the kernels.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "looplab/model/engine/block.h"
#include "looplab/model/engine/products.h"
#include "looplab/model/looped_transformer.h"

namespace looplab::engine {

namespace {

// About this many rows per tile: a tile's buffers (~11 d floats a row) then fit in a 1-2 MB L2
// at width 64-128, and the products still have rows enough to run at their rate.
constexpr int64_t kTileRows = 512;

}  // namespace

int64_t sequences_per_tile(int64_t B, int64_t L) {
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
  const Norms<T> norms = norms_of<T>(w);
  const torch::Tensor x = w[kX].contiguous().view({N, d});
  const torch::Tensor wh = w[kWh].defined() ? w[kWh].contiguous().view({N, d}) : torch::Tensor();
  const T *X = data<T>(x), *WH = data<T>(wh);
  const torch::Tensor cos = p.cos.contiguous(), sin = p.sin.contiguous(), keys = p.keys.contiguous();
  const int64_t W = keys.size(1);
  const bool full = every_key(keys, L);
  torch::Tensor result = torch::empty({sh.B, L, d}, x.options());
  T* OUT = result.data_ptr<T>();
  const int64_t tiles = (sh.B + per_tile - 1) / per_tile;
  // bf16-mixed: the weights' bfloat16 forms, taken here, outside the parallel region.
  std::array<Bf16Weight, kSlots> w16;
  if (sh.bf16)
    for (Slot s : {kWxW, kQkvW, kOutW, kFc1W, kFc2W})
      if (w[s].defined()) w16[s] = bf16_weight(w[s]);

  at::parallel_for(0, tiles, 1, [&](int64_t tile_begin, int64_t tile_end) {
    // One thread's buffers, for every tile of its share: r, n, u, mixed, y and z of d values a
    // row, qkv of 3d, the hidden layer's. Kept from call to call (a thread of the pool lives
    // on), so no iteration pays for fresh pages.
    const int64_t max_rows = per_tile * L;
    thread_local std::vector<T> buffer;
    if (buffer.size() < static_cast<size_t>(max_rows * (9 * d + hidden))) buffer.resize(max_rows * (9 * d + hidden));
    // bf16-mixed: a product's operand rounded to bfloat16, at most the hidden layer's width.
    thread_local std::vector<uint16_t> operand;
    if (sh.bf16 && operand.size() < static_cast<size_t>(max_rows * std::max(d, hidden)))
      operand.resize(max_rows * std::max(d, hidden));
    // C = A W^T + b over the tile's rows, A [rows, k] (k = the weight's columns).
    auto product = [&](const T* A, int64_t rows, Slot weight, Slot bias, T* C) {
      if constexpr (std::is_same_v<T, float>) {
        if (sh.bf16) {
          round_to_bf16(A, operand.data(), rows * w[weight].size(1));
          tile_linear_bf16(operand.data(), rows, w16[weight], w[bias], C);
          return;
        }
      }
      tile_linear(A, rows, w[weight], w[bias], C);
    };
    T *R = buffer.data(), *Nb = R + max_rows * d, *U = Nb + max_rows * d, *QKV = U + max_rows * d,
      *MIXED = QKV + max_rows * 3 * d, *Y = MIXED + max_rows * d, *Z = Y + max_rows * d, *HIDDEN = Z + max_rows * d;
    for (int64_t tile = tile_begin; tile < tile_end; ++tile) {
      const int64_t row0 = tile * per_tile * L;
      const int64_t seqs = std::min(per_tile, sh.B - tile * per_tile), rows = seqs * L;
      const T* xt = X + row0 * d;
      const T* wht = WH ? WH + row0 * d : nullptr;
      T* out = OUT + row0 * d;
      // The sublayer's input from its residual r: preN(r), then g(n, x0) for internal recall.
      auto sublayer_input = [&](const T* r) {
        const T* n = r;
        if (norms.pre) {
          for (int64_t i = 0; i < rows; ++i) rms_row(r + i * d, norms.pre, Nb + i * d, d);
          n = Nb;
        }
        if (!sh.internal) return n;
        product(n, rows, kWxW, kWxB, U);
        for (int64_t i = 0; i < rows; ++i) add_row(U + i * d, wht + i * d, d);
        return static_cast<const T*>(U);
      };
      // o = postN(r + periN(y)).
      auto sublayer_output = [&](const T* r, const T* y, T* o) {
        for (int64_t i = 0; i < rows; ++i) sublayer_output_row<T>(r + i * d, y + i * d, o + i * d, nullptr, norms, d);
      };

      // --- Attention sublayer -----------------------------------------------------------------
      const T* r = xt;
      if (sh.external) {
        product(xt, rows, kWxW, kWxB, R);
        for (int64_t i = 0; i < rows; ++i) add_row(R + i * d, wht + i * d, d);
        r = R;
      }
      product(sublayer_input(r), rows, kQkvW, kQkvB, QKV);
      const RopeRows<T> rope{QKV, QKV, data<T>(cos), data<T>(sin), data<T>(w[kQNorm]), data<T>(w[kKNorm]), L, d, H};
      rope_rows(rope, 0, rows);
      const AttentionRows<T> a{QKV, keys.data_ptr<int64_t>(), MIXED, nullptr, L, d, H, W, attention_scale<T>(hd)};
      if (full)
        full_attention(a, 0, seqs * H);
      else
        attention_rows(a, 0, rows);
      product(MIXED, rows, kOutW, kOutB, Y);
      sublayer_output(r, Y, Z);

      // --- MLP sublayer -----------------------------------------------------------------------
      product(sublayer_input(Z), rows, kFc1W, kFc1B, HIDDEN);
      bool hidden_rounded = false;
      if constexpr (std::is_same_v<T, float>) {
        if (sh.bf16) {  // GELU and the rounding to the next product's operand in one pass
          gelu_bf16_rows(HIDDEN, rows, hidden, operand.data());
          tile_linear_bf16(operand.data(), rows, w16[kFc2W], w[kFc2B], Y);
          hidden_rounded = true;
        }
      }
      if (!hidden_rounded) {
        // LibTorch's vectorized GELU on the tile (serial here: it is inside a parallel region).
        torch::Tensor hidden_layer = torch::from_blob(HIDDEN, {rows, hidden}, x.options());
        at::gelu_(hidden_layer);
        product(HIDDEN, rows, kFc2W, kFc2B, Y);
      }
      sublayer_output(Z, Y, out);
    }
  });
  return result;
}

template torch::Tensor forward_tiles<float>(const Slots&, const Shape&, const Positions&, int64_t);
template torch::Tensor forward_tiles<double>(const Slots&, const Shape&, const Positions&, int64_t);

}  // namespace looplab::engine
