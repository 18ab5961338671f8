// The fused iteration without gradient (model/fused_block.h) against the plain LibTorch block:
// every recall x pre/peri/post norm, short sequences (where the plain path uses a dense masked
// softmax) and long ones (a gathered window), 1-D and 2-D grids, the CPU preset's width and
// heads, one block call and a loop of many; and the cases it leaves to the plain path.
#include "looplab/model/fused_block.h"

#include <gtest/gtest.h>

#include "looplab/model/looped_transformer.h"

namespace looplab {
namespace {

double relative(const torch::Tensor& a, const torch::Tensor& b) {
  return ((a - b).norm() / b.norm()).item<double>();
}

struct Case {
  std::vector<int64_t> grid;
  int64_t window, width, heads;
};

TEST(FusedBlock, EqualsThePlainBlock) {
  const std::vector<Case> cases = {{{32}, 5, 64, 4},        // dense masked softmax in the plain path
                                   {{512}, 5, 64, 4},       // gathered window
                                   {{9, 9}, 3, 32, 2},      // 2-D, dense mask
                                   {{16, 16}, 3, 32, 2},    // 2-D, gathered
                                   {{40}, 7, 128, 8}};      // wider, more heads
  int checked = 0;
  for (Recall recall : {Recall::kNone, Recall::kExternal, Recall::kInternal, Recall::kFixed})
    for (Norm norm : {Norm::kPre, Norm::kPeri, Norm::kPost})
      for (const Case& k : cases) {
        torch::manual_seed(11);
        ModelConfig c = default_config("prefix-sums", recall, norm, k.width);
        c.heads = k.heads;
        c.grid = k.grid;
        c.window = k.window;
        if (recall == Recall::kFixed) c.blocks = 2;
        LoopedTransformer model(c);
        int64_t L = 1;
        for (int64_t g : k.grid) L *= g;
        const torch::Tensor input = torch::randint(0, 2, {2, L, 1}).to(torch::kFloat32);
        const Loop loop(*model, input);
        const Positions p = model->positions(k.grid);
        const torch::Tensor x = loop.x0().detach() + 0.1 * torch::randn_like(loop.x0());
        auto& block = *(*model->recur_blocks)[0]->as<BlockImpl>();
        const std::vector<torch::Tensor> r{block.recall_input(loop.x0().detach())};
        // The plain block: with gradient recording, which the fused path never takes.
        const torch::Tensor plain = block.forward(x, r[0], p).detach();
        torch::NoGradGuard no_grad;
        ASSERT_TRUE(fused_block_applies(block, x, p));
        const torch::Tensor fused = fused_block_forward(block, x, r[0], p);
        EXPECT_LT(relative(fused, plain), 1e-5) << to_string(recall) << " " << to_string(norm) << " L=" << L;
        ++checked;
      }
  EXPECT_EQ(checked, 4 * 3 * 5);
}

TEST(FusedBlock, ManyIterationsStayWithThePlainPath) {
  // 30 iterations of the whole model: the differences of float rounding do not grow apart.
  torch::manual_seed(2);
  ModelConfig c = default_config("prefix-sums", Recall::kExternal, Norm::kPost, 64);
  c.heads = 4;
  LoopedTransformer model(c);
  const torch::Tensor input = torch::randint(0, 2, {4, 128, 1}).to(torch::kFloat32);
  const torch::Tensor plain = model->forward(input, 30).state.detach();
  torch::Tensor fused;
  {
    torch::NoGradGuard no_grad;
    fused = model->forward(input, 30).state;
  }
  EXPECT_LT(relative(fused, plain), 1e-5);
}

TEST(FusedBlock, LeavesTheRestToThePlainPath) {
  torch::manual_seed(1);
  ModelConfig c = default_config("prefix-sums", Recall::kExternal, Norm::kGru, 16);
  c.heads = 2;
  LoopedTransformer gru(c);
  const Positions p = gru->positions({64});
  const torch::Tensor x = torch::randn({1, 64, 16});
  torch::NoGradGuard no_grad;
  EXPECT_FALSE(fused_block_applies(*(*gru->recur_blocks)[0]->as<BlockImpl>(), x, p));  // GRU norm
  c.norm = Norm::kPost;
  LoopedTransformer post(c);
  auto& block = *(*post->recur_blocks)[0]->as<BlockImpl>();
  EXPECT_TRUE(fused_block_applies(block, x, p));
  EXPECT_FALSE(fused_block_applies(block, x.to(torch::kFloat64), p));  // another dtype
  {
    torch::AutoGradMode with_grad(true);
    EXPECT_FALSE(fused_block_applies(block, x, p));  // recording gradients
  }
  c.local_attention = false;
  LoopedTransformer full(c);
  EXPECT_FALSE(fused_block_applies(*(*full->recur_blocks)[0]->as<BlockImpl>(), x, full->positions({64})));
}

}  // namespace
}  // namespace looplab
