// RMSNorm and the GRU cell against their closed forms, element by element.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "looplab/model/looped_transformer.h"

namespace looplab {
namespace {

TEST(RMSNorm, MatchesClosedFormWithDtypeEpsilon) {
  torch::manual_seed(1);
  for (auto dtype : {torch::kFloat32, torch::kFloat64}) {
    const double eps = dtype == torch::kFloat64 ? std::numeric_limits<double>::epsilon()
                                                : std::numeric_limits<float>::epsilon();
    // Tiny rows make epsilon matter.
    const torch::Tensor x = (torch::randn({3, 6}, torch::kFloat64) * torch::tensor({1.0, 1e-4, 1e-3}, torch::kFloat64).unsqueeze(1)).to(dtype);
    const torch::Tensor w = torch::randn({6}, torch::kFloat64).to(dtype);
    const torch::Tensor y = rms_norm(x, w).to(torch::kFloat64);
    const auto xd = x.to(torch::kFloat64), wd = w.to(torch::kFloat64);
    for (int i = 0; i < 3; ++i) {
      double ms = 0;
      for (int j = 0; j < 6; ++j) ms += xd[i][j].item<double>() * xd[i][j].item<double>() / 6.0;
      for (int j = 0; j < 6; ++j) {
        const double want = xd[i][j].item<double>() / std::sqrt(ms + eps) * wd[j].item<double>();
        EXPECT_NEAR(y[i][j].item<double>(), want, (dtype == torch::kFloat64 ? 1e-12 : 1e-5) * (1 + std::abs(want)));
      }
    }
  }
}

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

// GRU outer normalization is GRUCell(input = y, hidden = r) with PyTorch's gate order r, z, n:
//   r = s(W_ir y + b_ir + W_hr h + b_hr), z = s(W_iz y + b_iz + W_hz h + b_hz),
//   n = tanh(W_in y + b_in + r (W_hn h + b_hn)), h' = (1 - z) n + z h.
TEST(GRUCell, MatchesClosedForm) {
  torch::manual_seed(2);
  const int64_t d = 4;
  torch::nn::GRUCell cell(torch::nn::GRUCellOptions(d, d));
  cell->to(torch::kFloat64);
  const torch::Tensor y = torch::randn({2, d}, torch::kFloat64), h = torch::randn({2, d}, torch::kFloat64);
  const torch::Tensor out = cell(y, h);
  auto Wi = cell->weight_ih, Wh = cell->weight_hh, bi = cell->bias_ih, bh = cell->bias_hh;
  for (int b = 0; b < 2; ++b) {
    for (int k = 0; k < d; ++k) {
      auto gate_i = [&](int g) {
        double s = bi[g * d + k].item<double>();
        for (int j = 0; j < d; ++j) s += Wi[g * d + k][j].item<double>() * y[b][j].item<double>();
        return s;
      };
      auto gate_h = [&](int g) {
        double s = bh[g * d + k].item<double>();
        for (int j = 0; j < d; ++j) s += Wh[g * d + k][j].item<double>() * h[b][j].item<double>();
        return s;
      };
      const double r = sigmoid(gate_i(0) + gate_h(0));
      const double z = sigmoid(gate_i(1) + gate_h(1));
      const double n = std::tanh(gate_i(2) + r * gate_h(2));
      EXPECT_NEAR(out[b][k].item<double>(), (1 - z) * n + z * h[b][k].item<double>(), 1e-12);
    }
  }
}

}  // namespace
}  // namespace looplab
