#include "looplab/model/neighbourhood_kernel.h"

#include "looplab/model/fused_block.h"
#include "looplab/runtime.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

namespace looplab {

bool neighbourhood_kernel_applies(const torch::Tensor& q) {
  // Not under autocast (bf16-mixed): there v comes out of the qkv product in bfloat16, and the
  // products belong in bfloat16 as autocast runs them (the gathered path below).
  return !plain_engine() && q.device().is_cpu() && q.scalar_type() == torch::kFloat32 &&
         !autocast_enabled(c10::DeviceType::CPU) &&
         (!torch::GradMode::is_enabled() || !q.requires_grad());
}

torch::Tensor neighbourhood_attention_kernel(const torch::Tensor& q_in, const torch::Tensor& k_in,
                                             const torch::Tensor& v_in, const torch::Tensor& window, double scale) {
  const torch::Tensor q = q_in.contiguous(), k = k_in.contiguous(), v = v_in.contiguous();
  const torch::Tensor idx = window.to(torch::kCPU, torch::kInt64).contiguous();
  const int64_t L = q.size(2), d = q.size(3), W = idx.size(1), rows = q.numel() / d;
  TORCH_CHECK(idx.size(0) == L, "neighbourhood kernel: window of another sequence length");
  torch::Tensor out = torch::empty_like(q);
  const float *Q = q.data_ptr<float>(), *K = k.data_ptr<float>(), *V = v.data_ptr<float>();
  const int64_t* I = idx.data_ptr<int64_t>();
  float* O = out.data_ptr<float>();
  const float s = static_cast<float>(scale);
  // Rows are (batch, head, query); each reads the W key and value rows of its own (batch, head).
  at::parallel_for(0, rows, 256, [&](int64_t begin, int64_t end) {
    std::vector<float> w(W);
    for (int64_t r = begin; r < end; ++r) {
      const int64_t base = (r / L) * L, c = r % L;
      const float* qr = Q + r * d;
      const int64_t* keys = I + c * W;
      float top = -std::numeric_limits<float>::infinity();
      for (int64_t j = 0; j < W; ++j) {
        const float* kr = K + (base + keys[j]) * d;
        float dot = 0;
        for (int64_t t = 0; t < d; ++t) dot += qr[t] * kr[t];
        w[j] = dot * s;
        top = std::max(top, w[j]);
      }
      float z = 0;
      for (int64_t j = 0; j < W; ++j) z += (w[j] = std::exp(w[j] - top));
      float* orow = O + r * d;
      for (int64_t t = 0; t < d; ++t) orow[t] = 0;
      for (int64_t j = 0; j < W; ++j) {
        const float a = w[j] / z;
        const float* vr = V + (base + keys[j]) * d;
        for (int64_t t = 0; t < d; ++t) orow[t] += a * vr[t];
      }
    }
  });
  return out;
}

}  // namespace looplab
