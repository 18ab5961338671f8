#include "looplab/eval/readout.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "looplab/model/engine/engine.h"
#include "looplab/model/engine/products.h"
#include "looplab/model/looped_transformer.h"
#include "looplab/model/engine/row_math.h"
#include "looplab/platform/runtime.h"
#include "looplab/tasks/registry.h"

namespace looplab {

torch::Tensor predict(const torch::Tensor& logits, Decoding decoding) {
  if (decoding == Decoding::kArgmax) return logits.argmax(-1);
  const torch::Tensor top2 = std::get<1>(logits.select(-1, 1).topk(2, -1));
  return torch::zeros(logits.sizes().slice(0, logits.dim() - 1), logits.options().dtype(torch::kInt64))
      .scatter_(-1, top2, 1);
}

torch::Tensor predict(const torch::Tensor& logits, const LoopedTransformerImpl& model) {
  return predict(logits, task(model.config().task).spec().decoding);
}

namespace {

// Floats per tile buffer (512 KB): H and G then stay within a core's L2, with 2,048 rows at width
// 64 and 512 at 256. A tile holds whole examples where they fit (fewer, larger products: each
// call costs about as much as a small product).
constexpr int64_t kTileFloats = 128 * 1024;

// Rows [0, rows) of x (and of the previous state px), each d wide: the head's RMSNorm as rms_norm
// computes it, h = x * rsqrt(mean(x^2) + eps) * w, and each row's sums for the relative step,
// dd = |x - px|^2 and pp = |px|^2, in one pass.
LOOPLAB_CLONES void norm_rows(const float* x, const float* px, int64_t rows, int64_t d, const float* w, float eps,
                              float* h, float* dd, float* pp) {
  for (int64_t i = 0; i < rows; ++i) {
    const float* xr = x + i * d;
    const float* pr = px + i * d;
    float ss = 0, diff = 0, prev = 0;
    for (int64_t j = 0; j < d; ++j) {
      ss += xr[j] * xr[j];
      const float delta = xr[j] - pr[j];
      diff += delta * delta;
      prev += pr[j] * pr[j];
    }
    dd[i] = diff;
    pp[i] = prev;
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(d) + eps);
    float* hr = h + i * d;
    for (int64_t j = 0; j < d; ++j) hr[j] = xr[j] * inv * w[j];
  }
}

// GELU in place on n values (row_math.h; LibTorch's at::gelu_ per tile cost a oneDNN primitive
// look-up per call, a few percent of an evaluation).
LOOPLAB_CLONES void gelu_values(float* g, int64_t n) {
  for (int64_t i = 0; i < n; ++i) g[i] = gelu_erf(g[i]);
}

// The head's modules: RMSNorm -> Linear -> GELU -> Linear (looped_transformer.h).
struct Head {
  torch::Tensor norm, w1, b1, w2, b2;
};

Head head_of(const LoopedTransformerImpl& model) {
  const torch::nn::SequentialImpl& h = *model.head;
  const auto* first = h.ptr(1)->as<AtenLinearImpl>();
  const auto* second = h.ptr(3)->as<AtenLinearImpl>();
  return {h.ptr(0)->as<RMSNormImpl>()->weight.contiguous(), first->weight.contiguous(), first->bias.contiguous(),
          second->weight.contiguous(), second->bias.contiguous()};
}

}  // namespace

bool fused_readout_applies(const LoopedTransformerImpl& model, const torch::Tensor& x) {
  return !plain_engine() && x.device().is_cpu() && x.scalar_type() == torch::kFloat32 && x.dim() == 3 &&
         model.dtype() == torch::kFloat32 && !torch::GradMode::is_enabled();
}

ReadoutCounts fused_readout(const LoopedTransformerImpl& model, const torch::Tensor& previous_state,
                            const torch::Tensor& state, const torch::Tensor& target, torch::Tensor& prediction,
                            Decoding decoding) {
  const Head head = head_of(model);
  // bf16-mixed: the head's products as the block's (products.h), their weights' bfloat16 copies
  // taken here, outside the parallel region.
  const bool bf16 = model.mixed_precision();
  const engine::Bf16Weight w1_16 = bf16 ? engine::bf16_weight(head.w1) : engine::Bf16Weight{},
                           w2_16 = bf16 ? engine::bf16_weight(head.w2) : engine::Bf16Weight{};
  const int64_t B = state.size(0), L = state.size(1), d = state.size(2), C = head.w2.size(0);
  const torch::Tensor x = state.contiguous(), px = previous_state.contiguous();
  const torch::Tensor y = target.to(torch::kInt64).contiguous();
  prediction = prediction.contiguous();
  const float *X = x.data_ptr<float>(), *PX = px.data_ptr<float>(), *NW = head.norm.data_ptr<float>();
  const int64_t* Y = y.data_ptr<int64_t>();
  int64_t* P = prediction.data_ptr<int64_t>();
  const float eps = std::numeric_limits<float>::epsilon();
  // Per example, summed in order afterwards: the counts do not depend on the threads.
  std::vector<int64_t> right(B), exact(B), unchanged(B);
  std::vector<double> step(B);

  const int64_t tile_rows = std::max<int64_t>(1, kTileFloats / d);
  const int64_t per_group = std::max<int64_t>(1, tile_rows / L);  // whole examples a tile holds
  const int64_t groups = (B + per_group - 1) / per_group;
  at::parallel_for(0, groups, 1, [&](int64_t group_begin, int64_t group_end) {
    std::vector<float> H(tile_rows * d), G(tile_rows * d), Z(tile_rows * C), score(per_group * L), dd(tile_rows),
        pp(tile_rows);
    std::vector<int64_t> answer(per_group * L);
    std::vector<uint16_t> operand(bf16 ? tile_rows * d : 0);
    // C = A W^T + b over a tile's rows, A [rows, d].
    auto product = [&](const float* A, int64_t rows, const torch::Tensor& W, const engine::Bf16Weight& W16,
                       const torch::Tensor& b, float* C) {
      if (!bf16) return engine::tile_linear(A, rows, W, b, C);
      engine::round_to_bf16(A, operand.data(), rows * d);
      engine::tile_linear_bf16(operand.data(), rows, W16, b, C);
    };
    std::vector<double> diff2(per_group), norm2(per_group);  // per row in float, over rows in double
    for (int64_t g = group_begin; g < group_end; ++g) {
      const int64_t e0 = g * per_group, e1 = std::min(B, e0 + per_group), rows_in_group = (e1 - e0) * L;
      std::fill(diff2.begin(), diff2.end(), 0.0);
      std::fill(norm2.begin(), norm2.end(), 0.0);
      // The group's rows [e0 L, e1 L) are contiguous; tiles of at most tile_rows of them.
      for (int64_t r0 = 0; r0 < rows_in_group; r0 += tile_rows) {
        const int64_t rows = std::min(tile_rows, rows_in_group - r0);
        norm_rows(X + (e0 * L + r0) * d, PX + (e0 * L + r0) * d, rows, d, NW, eps, H.data(), dd.data(), pp.data());
        for (int64_t i = 0; i < rows; ++i) {
          const int64_t e = (r0 + i) / L;
          diff2[e] += dd[i];
          norm2[e] += pp[i];
        }
        product(H.data(), rows, head.w1, w1_16, head.b1, G.data());
        gelu_values(G.data(), rows * d);
        product(G.data(), rows, head.w2, w2_16, head.b2, Z.data());
        for (int64_t i = 0; i < rows; ++i) {
          const float* z = Z.data() + i * C;
          if (decoding == Decoding::kArgmax) {
            int64_t best = 0;  // the first of equal maxima, as argmax
            for (int64_t c = 1; c < C; ++c)
              if (z[c] > z[best]) best = c;
            answer[r0 + i] = best;
          } else {
            score[r0 + i] = z[1];
          }
        }
      }
      for (int64_t b = e0; b < e1; ++b) {
        const int64_t o = (b - e0) * L;
        if (decoding == Decoding::kTopTwoMove) {
          // Class 1 on the two positions with the largest class-1 logits (the first of equals).
          const float* sc = score.data() + o;
          int64_t first = 0;
          for (int64_t l = 1; l < L; ++l)
            if (sc[l] > sc[first]) first = l;
          int64_t second = first == 0 ? 1 : 0;
          for (int64_t l = 0; l < L; ++l)
            if (l != first && sc[l] > sc[second]) second = l;
          std::fill(answer.begin() + o, answer.begin() + o + L, 0);
          answer[o + first] = 1;
          if (L > 1) answer[o + second] = 1;
        }
        int64_t ok = 0;
        bool same = true;
        int64_t* p = P + b * L;
        const int64_t* t = Y + b * L;
        for (int64_t l = 0; l < L; ++l) {
          ok += answer[o + l] == t[l];
          same = same && answer[o + l] == p[l];
          p[l] = answer[o + l];
        }
        right[b] = ok;
        exact[b] = ok == L;
        unchanged[b] = same;
        step[b] = std::sqrt(diff2[b - e0]) / std::sqrt(norm2[b - e0]);
      }
    }
  });
  ReadoutCounts c;
  for (int64_t b = 0; b < B; ++b) {
    c.exact += exact[b];
    c.positions_right += right[b];
    c.unchanged += unchanged[b];
    c.step += step[b];
  }
  return c;
}

}  // namespace looplab
