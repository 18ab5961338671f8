// Loop, the one way to run a model, against independent computations: forward, the blocks
// applied by hand with Wh x0 recomputed every iteration, row selection, and gradients.
#include "looplab/model/looped_transformer.h"

#include <gtest/gtest.h>

#include "looplab/util/error.h"

namespace looplab {
namespace {

LoopedTransformer tiny(const std::string& task, Recall recall, Norm norm) {
  torch::manual_seed(11);
  ModelConfig c = default_config(task, recall, norm, 16);
  c.heads = 2;
  return LoopedTransformer(c);
}

torch::Tensor bits(int64_t batch, int64_t length) {
  return torch::randint(0, 2, {batch, length, 1}, torch::kInt64).to(torch::kFloat32);
}

TEST(Loop, RunEqualsForwardAndTheBlocksByHand) {
  for (Recall recall : {Recall::kNone, Recall::kExternal, Recall::kInternal}) {
    LoopedTransformer model = tiny("prefix-sums", recall, Norm::kPost);
    torch::NoGradGuard no_grad;
    const torch::Tensor input = bits(3, 12);
    const Loop loop(*model, input);
    const torch::Tensor x = loop.run(7);
    const auto out = model->forward(input, 7);
    EXPECT_TRUE(torch::equal(x, out.state)) << to_string(recall);
    EXPECT_TRUE(torch::equal(loop.logits(x), out.logits));
    // By hand: the block with Wh x0 computed again in every iteration, as the paper's code does.
    auto* block = model->recur_blocks[0]->as<BlockImpl>();
    const Positions p = model->positions({12});
    const torch::Tensor x0 = model->projection(input);
    torch::Tensor h = x0;
    for (int t = 0; t < 7; ++t) h = block->forward(h, block->recall_input(x0), p);
    EXPECT_TRUE(torch::allclose(h, x, 1e-6, 1e-6)) << to_string(recall);
    EXPECT_TRUE(torch::equal(Loop::from_x0(*model, x0).run(7), x));
  }
}

TEST(Loop, VisitSeesEveryIterationAndLogitsOnRequest) {
  LoopedTransformer model = tiny("sudoku", Recall::kExternal, Norm::kGru);
  torch::NoGradGuard no_grad;
  const torch::Tensor input = torch::one_hot(torch::randint(0, 10, {2, 81}), 10).to(torch::kFloat32);
  const Loop loop(*model, input);
  std::vector<int64_t> seen;
  loop.run(4, [&](int64_t t, const torch::Tensor& state, const torch::Tensor& logits) {
    seen.push_back(t);
    EXPECT_TRUE(torch::equal(state, loop.run(t)));
    EXPECT_TRUE(torch::equal(logits, loop.logits(state)));
  }, {}, /*with_logits=*/true);
  EXPECT_EQ(seen, (std::vector<int64_t>{1, 2, 3, 4}));
  loop.run(2, [&](int64_t, const torch::Tensor&, const torch::Tensor& logits) { EXPECT_FALSE(logits.defined()); });
  // From another start.
  const torch::Tensor zero = torch::zeros_like(loop.x0());
  EXPECT_TRUE(torch::equal(loop.run(3, nullptr, zero), loop.step(loop.step(loop.step(zero)))));
}

TEST(Loop, SelectRunsTheChosenExamplesAlone) {
  LoopedTransformer model = tiny("prefix-sums", Recall::kInternal, Norm::kPeri);
  torch::NoGradGuard no_grad;
  const torch::Tensor input = bits(5, 9);
  const Loop loop(*model, input);
  const torch::Tensor x = loop.run(3);
  const torch::Tensor index = torch::tensor(std::vector<int64_t>{1, 4});
  const torch::Tensor chosen = loop.select(index).step(x.index_select(0, index));
  EXPECT_TRUE(torch::allclose(chosen, loop.step(x).index_select(0, index), 1e-6, 1e-6));
  EXPECT_TRUE(torch::allclose(chosen, Loop(*model, input.index_select(0, index)).step(x.index_select(0, index)), 1e-6, 1e-6));
}

TEST(Loop, GradientFollowsLibTorchsMode) {
  LoopedTransformer model = tiny("prefix-sums", Recall::kExternal, Norm::kPost);
  const torch::Tensor input = bits(2, 8);
  {
    torch::NoGradGuard no_grad;
    EXPECT_FALSE(Loop(*model, input).run(3).requires_grad());
  }
  const Loop loop(*model, input);
  loop.logits(loop.run(3)).sum().backward();
  auto* block = model->recur_blocks[0]->as<BlockImpl>();
  ASSERT_TRUE(block->Wh->weight.grad().defined());
  EXPECT_GT(block->Wh->weight.grad().abs().sum().item<double>(), 0);
  EXPECT_GT(model->projection->weight.grad().abs().sum().item<double>(), 0);
}

TEST(Loop, RefusesInputsOfTheWrongShape) {
  LoopedTransformer model = tiny("sudoku", Recall::kExternal, Norm::kPost);
  EXPECT_THROW({ const Loop l(*model, torch::zeros({2, 81, 3})); }, Error);   // channels
  EXPECT_THROW({ const Loop l(*model, torch::zeros({2, 80, 10})); }, Error);  // not a 9x9 grid
}

}  // namespace
}  // namespace looplab
