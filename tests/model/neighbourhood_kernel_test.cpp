// The neighbourhood-attention kernel of iterations without gradient against independent
// formulas: a dense softmax with the window as a mask, and the whole model run with gradient
// recording (which takes the plain LibTorch path), every recall x norm, 1-D and 2-D grids.
#include "looplab/model/neighbourhood_kernel.h"

#include <gtest/gtest.h>

#include "looplab/model/looped_transformer.h"

namespace looplab {
namespace {

double relative(const torch::Tensor& a, const torch::Tensor& b) {
  return ((a - b).norm() / b.norm()).item<double>();
}

TEST(NeighbourhoodKernel, EqualsTheMaskedDenseSoftmax) {
  torch::manual_seed(5);
  for (const std::vector<int64_t>& grid : {std::vector<int64_t>{100}, std::vector<int64_t>{9, 13}}) {
    int64_t L = 1;
    for (int64_t g : grid) L *= g;
    const torch::Tensor q = torch::randn({2, 3, L, 8}), k = torch::randn({2, 3, L, 8}), v = torch::randn({2, 3, L, 8});
    const torch::Tensor window = neighbourhood_index(grid, 5);
    torch::Tensor mask = torch::full({L, L}, -std::numeric_limits<double>::infinity());
    mask.scatter_(1, window, 0.0);
    const double scale = 1 / std::sqrt(8.0);
    const torch::Tensor dense = torch::matmul(torch::softmax(torch::matmul(q, k.transpose(-1, -2)) * scale + mask, -1), v);
    EXPECT_LT(relative(neighbourhood_attention_kernel(q, k, v, window, scale), dense), 1e-6) << L;
    // A non-contiguous view of v, as the model passes it.
    const torch::Tensor vt = v.transpose(1, 2).contiguous().transpose(1, 2);
    EXPECT_LT(relative(neighbourhood_attention_kernel(q, k, vt, window, scale), dense), 1e-6);
  }
}

TEST(NeighbourhoodKernel, ModelWithoutGradientEqualsThePlainPath) {
  for (Recall recall : {Recall::kNone, Recall::kExternal, Recall::kInternal, Recall::kFixed})
    for (Norm norm : {Norm::kPre, Norm::kPeri, Norm::kPost, Norm::kGru})
      for (const std::vector<int64_t>& grid : {std::vector<int64_t>{64}, std::vector<int64_t>{12, 12}}) {
        torch::manual_seed(3);
        ModelConfig c = default_config("prefix-sums", recall, norm, 16);
        c.heads = 2;
        c.grid = grid;
        if (recall == Recall::kFixed) c.blocks = 3;
        if (grid.size() == 2) c.window = 3;
        LoopedTransformer model(c);
        int64_t L = 1;
        for (int64_t g : grid) L *= g;
        const torch::Tensor input = torch::randint(0, 2, {3, L, 1}).to(torch::kFloat32);
        torch::Tensor fast;
        {
          torch::NoGradGuard no_grad;
          ASSERT_TRUE(neighbourhood_kernel_applies(torch::zeros({1})));
          fast = model->forward(input, 4).state;
        }
        const torch::Tensor plain = model->forward(input, 4).state;  // with gradient: the plain formula
        ASSERT_TRUE(plain.requires_grad());
        EXPECT_LT(relative(fast, plain.detach()), 1e-5) << to_string(recall) << " " << to_string(norm) << " " << L;
      }
}

}  // namespace
}  // namespace looplab
