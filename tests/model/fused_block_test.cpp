// The fused iteration (model/engine/engine.h) against the plain LibTorch block, without gradient
// and with (its hand-written backward, also against finite differences):
// every recall x pre/peri/post norm, short sequences (where the plain path uses a dense masked
// softmax) and long ones (a gathered window), 1-D and 2-D grids, the CPU preset's width and
// heads, one block call and a loop of many; and the cases it leaves to the plain path.
#include "../util/finite_difference.h"
#include "looplab/model/engine/engine.h"

#include <gtest/gtest.h>

#include <optional>

#include "looplab/model/looped_transformer.h"

namespace looplab {
namespace {

double relative(const torch::Tensor& a, const torch::Tensor& b) {
  return ((a - b).norm() / b.norm()).item<double>();
}

struct Case {
  std::vector<int64_t> grid;
  int64_t window, width, heads;
  bool local = true;
};

// Sets LibTorch's threads for a scope and restores them at its end, also when an ASSERT leaves.
struct ThreadsScope {
  explicit ThreadsScope(int n) : saved(at::get_num_threads()) { at::set_num_threads(n); }
  ~ThreadsScope() { at::set_num_threads(saved); }
  int saved;
};

TEST(FusedBlock, EqualsThePlainBlock) {
  const ThreadsScope threads(2);
  const std::vector<Case> cases = {{{32}, 5, 64, 4},        // dense masked softmax in the plain path
                                   {{512}, 5, 64, 4},       // gathered window
                                   {{9, 9}, 3, 32, 2},      // 2-D, dense mask
                                   {{16, 16}, 3, 32, 2},    // 2-D, gathered
                                   {{40}, 7, 128, 8},       // wider, more heads
                                   {{9, 9}, 0, 32, 4, false},  // full attention (sudoku's)
                                   {{100}, 0, 16, 2, false}};
  int checked = 0;
  for (Recall recall : {Recall::kNone, Recall::kExternal, Recall::kInternal, Recall::kFixed})
    for (Norm norm : {Norm::kPre, Norm::kPeri, Norm::kPost})
      for (const Case& k : cases) {
        torch::manual_seed(11);
        ModelConfig c = default_config("prefix-sums", recall, norm, k.width);
        c.heads = k.heads;
        c.grid = k.grid;
        c.window = k.local ? k.window : 1;
        c.neighbourhood_attention = k.local;
        if (recall == Recall::kFixed) c.blocks = 2;
        LoopedTransformer model(c);
        int64_t L = 1;
        for (int64_t g : k.grid) L *= g;
        // Batch 1 on two threads takes the row-parallel forward, batch 4 the tiles of whole
        // sequences (model/engine/block_tiles.cpp: sequences_per_tile); the batch alternates between cases.
        const int64_t batch = checked % 2 == 0 ? 4 : 1;
        const torch::Tensor input = torch::randint(0, 2, {batch, L, 1}).to(torch::kFloat32);
        const Loop loop(*model, input);
        const Positions p = model->positions(k.grid);
        const torch::Tensor x = loop.x0().detach() + 0.1 * torch::randn_like(loop.x0());
        auto& block = *(*model->recur_blocks)[0]->as<BlockImpl>();
        const std::vector<torch::Tensor> r{block.recall_input(loop.x0().detach())};
        // The plain LibTorch formulas: with gradient recording the fused path would run too
        // (its differentiable node), so only a PlainEngine scope keeps it out.
        torch::Tensor plain;
        {
          PlainEngine plain_scope;
          plain = block.forward(x, r[0], p).detach();
        }
        torch::NoGradGuard no_grad;
        ASSERT_TRUE(fused_block_applies(block, x, p));
        const torch::Tensor fused = fused_block_forward(block, x, r[0], p);
        EXPECT_LT(relative(fused, plain), 1e-5) << to_string(recall) << " " << to_string(norm) << " L=" << L;
        // In float64 the same formulas agree to rounding: a slip in a part that moves the
        // output little (the attention of a freshly initialised block) still shows.
        model->to(torch::kFloat64);
        const Positions p64 = model->positions(k.grid);
        const torch::Tensor x64 = x.to(torch::kFloat64);
        const torch::Tensor r64 = block.recall_input(Loop(*model, input.to(torch::kFloat64)).x0());
        torch::Tensor plain64;
        {
          PlainEngine plain_scope;
          plain64 = block.forward(x64, r64, p64);
        }
        EXPECT_LT(relative(fused_block_forward(block, x64, r64, p64), plain64), 1e-11)
            << to_string(recall) << " " << to_string(norm) << " L=" << L << " (float64)";
        ++checked;
      }
  EXPECT_EQ(checked, 4 * 3 * 7);
}

TEST(FusedBlock, ManyIterationsStayWithThePlainPath) {
  // 30 iterations of the whole model: the differences of float rounding do not grow apart.
  torch::manual_seed(2);
  ModelConfig c = default_config("prefix-sums", Recall::kExternal, Norm::kPost, 64);
  c.heads = 4;
  LoopedTransformer model(c);
  const torch::Tensor input = torch::randint(0, 2, {4, 128, 1}).to(torch::kFloat32);
  torch::Tensor plain, fused;
  {
    // The plain LibTorch path: every block call on the plain formulas, none on the fused node.
    PlainEngine plain_scope;
    torch::NoGradGuard no_grad;
    plain = model->forward(input, 30).state;
  }
  {
    torch::NoGradGuard no_grad;
    ASSERT_TRUE(fused_block_applies(*(*model->recur_blocks)[0]->as<BlockImpl>(), Loop(*model, input).x0(),
                                    model->positions(c.grid)));
    fused = model->forward(input, 30).state;
  }
  EXPECT_LT(relative(fused, plain), 1e-5);
}

// ---------------------------------------------------------------------------------------------
// With gradient: the hand-written backward

// Every tensor one block call differentiates: the state, Wh x0, the block's parameters.
struct Differentiated {
  torch::Tensor x, wh;
  std::vector<torch::Tensor> params;
};

// Gradients of sum(block(x, wh) * weights) with respect to x, wh and every parameter.
std::vector<torch::Tensor> gradients(BlockImpl& block, const Differentiated& in, const torch::Tensor& weights,
                                     const Positions& p, bool plain) {
  std::optional<PlainEngine> scope;
  if (plain) scope.emplace();
  std::vector<torch::Tensor> leaves{in.x};
  if (in.wh.defined()) leaves.push_back(in.wh);
  for (const auto& t : in.params) leaves.push_back(t);
  const torch::Tensor out = block.forward(in.x, in.wh, p);
  return torch::autograd::grad({(out * weights).sum()}, leaves, {}, false, false, /*allow_unused=*/true);
}

struct GradCase {
  Recall recall;
  Norm norm;
  std::vector<int64_t> grid;
  int64_t window, width, heads;
  bool local = true;
};

// A block of the case's model and inputs that require gradient, in `dtype`.
struct GradSetup {
  LoopedTransformer model{nullptr};
  BlockImpl* block = nullptr;
  Positions p;
  Differentiated in;
  torch::Tensor weights;
};

GradSetup grad_setup(const GradCase& k, torch::Dtype dtype, uint64_t seed) {
  torch::manual_seed(seed);
  ModelConfig c = default_config("prefix-sums", k.recall, k.norm, k.width);
  c.heads = k.heads;
  c.grid = k.grid;
  c.window = k.local ? k.window : 1;
  c.neighbourhood_attention = k.local;
  GradSetup s;
  s.model = LoopedTransformer(c);
  s.model->to(dtype);
  // Norm weights away from 1 and biases away from 0, so that their gradients are exercised.
  {
    torch::NoGradGuard no_grad;
    for (auto& t : s.model->parameters()) t.add_(0.2 * torch::randn_like(t));
  }
  s.block = (*s.model->recur_blocks)[0]->as<BlockImpl>();
  int64_t L = 1;
  for (int64_t g : k.grid) L *= g;
  s.p = s.model->positions(k.grid);
  const auto opts = torch::TensorOptions().dtype(dtype);
  s.in.x = torch::randn({2, L, k.width}, opts).requires_grad_(true);
  if (s.block->Wh) s.in.wh = torch::randn({2, L, k.width}, opts).requires_grad_(true);
  // Wh acts on x0 outside the block (wh is its output): the block call does not differentiate it.
  for (const auto& item : s.block->named_parameters())
    if (item.key().rfind("Wh.", 0) != 0) s.in.params.push_back(item.value());
  s.weights = torch::randn({2, L, k.width}, opts);
  return s;
}

const std::vector<GradCase>& grad_cases() {
  static const std::vector<GradCase> cases = [] {
    std::vector<GradCase> out;
    for (Recall recall : {Recall::kNone, Recall::kExternal, Recall::kInternal})
      for (Norm norm : {Norm::kPre, Norm::kPeri, Norm::kPost}) {
        out.push_back({recall, norm, {12}, 5, 16, 2});
        out.push_back({recall, norm, {5, 6}, 3, 16, 4});
      }
    out.push_back({Recall::kExternal, Norm::kPost, {48}, 7, 32, 4});  // 48 tokens: long for the plain path
    out.push_back({Recall::kExternal, Norm::kPost, {4, 4}, 0, 16, 2, false});  // full attention
    out.push_back({Recall::kInternal, Norm::kPeri, {10}, 0, 16, 4, false});
    out.push_back({Recall::kExternal, Norm::kPre, {9, 9}, 0, 64, 2, false});  // sudoku's 81 keys, head size 32
    // Heads of a whole vector and a rest (float64: 12 = 8 + 4; float32: 24 = 16 + 8), 21 keys.
    out.push_back({Recall::kInternal, Norm::kPost, {7, 3}, 0, 24, 2, false});
    out.push_back({Recall::kNone, Norm::kPeri, {21}, 0, 48, 2, false});
    return out;
  }();
  return cases;
}

std::string name(const GradCase& k) {
  std::string grid;
  for (int64_t g : k.grid) grid += (grid.empty() ? "" : "x") + std::to_string(g);
  return to_string(k.recall) + " " + to_string(k.norm) + " " + grid + (k.local ? "" : " full");
}

TEST(FusedBlock, GradientsEqualThePlainBlocksInFloat64) {
  for (const GradCase& k : grad_cases()) {
    GradSetup s = grad_setup(k, torch::kFloat64, 5);
    ASSERT_TRUE(fused_block_applies(*s.block, s.in.x, s.p)) << name(k);
    const auto fused = gradients(*s.block, s.in, s.weights, s.p, false);
    const auto plain = gradients(*s.block, s.in, s.weights, s.p, true);
    ASSERT_EQ(fused.size(), plain.size());
    for (size_t i = 0; i < fused.size(); ++i) {
      ASSERT_TRUE(plain[i].defined() && fused[i].defined()) << name(k) << " gradient " << i;
      EXPECT_LT(relative(fused[i], plain[i]), 1e-11) << name(k) << " gradient " << i;
    }
  }
}

TEST(FusedBlock, GradientsMatchFiniteDifferences) {
  // Central differences in float64 of the fused block itself, at a few coordinates of every
  // differentiated tensor: independent of both autograd and the plain formula.
  for (const GradCase& k : grad_cases()) {
    GradSetup s = grad_setup(k, torch::kFloat64, 9);
    const auto analytic = gradients(*s.block, s.in, s.weights, s.p, false);
    std::vector<torch::Tensor> leaves{s.in.x};
    if (s.in.wh.defined()) leaves.push_back(s.in.wh);
    for (const auto& t : s.in.params) leaves.push_back(t);
    torch::NoGradGuard no_grad;
    auto loss = [&] { return (s.block->forward(s.in.x, s.in.wh, s.p) * s.weights).sum().item<double>(); };
    const double h = 1e-6;
    for (size_t i = 0; i < leaves.size(); ++i) {
      const torch::Tensor g = analytic[i].reshape({-1});
      for (int64_t j : {int64_t{0}, leaves[i].numel() / 2, leaves[i].numel() - 1}) {
        const double numeric = testing::central_difference(leaves[i], j, h, loss), exact = g[j].item<double>();
        EXPECT_NEAR(exact, numeric, 1e-6 * std::max(1.0, std::abs(numeric))) << name(k) << " tensor " << i << "[" << j << "]";
      }
    }
  }
}

TEST(FusedBlock, Float32WithGradientStaysWithThePlainBlock) {
  for (const GradCase& k : grad_cases()) {
    GradSetup s = grad_setup(k, torch::kFloat32, 3);
    const torch::Tensor fused_out = s.block->forward(s.in.x, s.in.wh, s.p);
    torch::Tensor plain_out;
    {
      PlainEngine plain;
      plain_out = s.block->forward(s.in.x, s.in.wh, s.p);
    }
    EXPECT_TRUE(fused_out.requires_grad());
    EXPECT_LT(relative(fused_out.detach(), plain_out.detach()), 1e-5) << name(k);
    const auto fused = gradients(*s.block, s.in, s.weights, s.p, false);
    const auto plain = gradients(*s.block, s.in, s.weights, s.p, true);
    for (size_t i = 0; i < fused.size(); ++i) EXPECT_LT(relative(fused[i], plain[i]), 1e-4) << name(k) << " " << i;
  }
}

TEST(FusedBlock, TrainingThroughManyIterationsEqualsThePlainPath) {
  // k = 6 iterations with gradient after n = 4 without, as the progressive loss runs them:
  // every parameter's gradient, and x0's through the recall, against the plain path.
  for (Recall recall : {Recall::kExternal, Recall::kInternal, Recall::kNone}) {
    torch::manual_seed(4);
    ModelConfig c = default_config("prefix-sums", recall, Norm::kPost, 32);
    c.heads = 4;
    LoopedTransformer model(c);
    model->to(torch::kFloat64);
    const torch::Tensor input = torch::randint(0, 2, {3, 40, 1}).to(torch::kFloat64);
    auto run = [&](bool plain) {
      std::optional<PlainEngine> scope;
      if (plain) scope.emplace();
      model->zero_grad();
      const Loop loop(*model, input);
      torch::Tensor start;
      {
        torch::NoGradGuard no_grad;
        start = loop.run(4);
      }
      loop.logits(loop.run(6, nullptr, start)).pow(2).mean().backward();
      std::vector<torch::Tensor> g;
      for (const auto& item : model->named_parameters()) {
        // Without recall, the state after the n iterations forgets x0: the projection gets nothing.
        const bool reached = recall != Recall::kNone || item.key().rfind("projection.", 0) != 0;
        EXPECT_EQ(item.value().grad().defined(), reached) << item.key() << (plain ? " plain" : " fused");
        if (reached) g.push_back(item.value().grad().clone());
      }
      return g;
    };
    const auto fused = run(false), plain = run(true);
    for (size_t i = 0; i < fused.size(); ++i) EXPECT_LT(relative(fused[i], plain[i]), 1e-10) << to_string(recall) << " " << i;
  }
}

TEST(FusedBlock, DoubleBackwardIsRefusedAndWorksInAPlainScope) {
  GradSetup s = grad_setup({Recall::kExternal, Norm::kPost, {12}, 5, 16, 2}, torch::kFloat64, 1);
  const torch::Tensor u = torch::randn_like(s.weights).requires_grad_(true);
  auto vjp = [&] {
    const torch::Tensor out = s.block->forward(s.in.x, s.in.wh, s.p);
    return torch::autograd::grad({out}, {s.in.x}, {u}, true, /*create_graph=*/true)[0];
  };
  EXPECT_THROW(vjp(), std::exception);
  PlainEngine plain;
  const torch::Tensor g = vjp();
  const torch::Tensor jvp = torch::autograd::grad({g}, {u}, {torch::ones_like(g)})[0];
  EXPECT_TRUE(jvp.defined());
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
    PlainEngine plain;
    EXPECT_FALSE(fused_block_applies(block, x, p));  // a plain scope
  }
  c.neighbourhood_attention = false;
  LoopedTransformer full(c);
  auto& full_block = *(*full->recur_blocks)[0]->as<BlockImpl>();
  EXPECT_TRUE(fused_block_applies(full_block, x, full->positions({64})));  // full attention, every key
  const torch::Tensor longer = torch::randn({1, kMaxFusedKeys + 1, 16});
  EXPECT_FALSE(fused_block_applies(full_block, longer, full->positions({kMaxFusedKeys + 1})));  // too many keys
}

// engine_for names the engine of a configuration by the same allow-list that each block call
// goes by: for every recall x norm, its answer is the block's.
TEST(Engine, ForAConfigurationIsTheBlocksChoice) {
  torch::NoGradGuard no_grad;
  for (Recall recall : {Recall::kNone, Recall::kExternal, Recall::kInternal, Recall::kFixed})
    for (Norm norm : {Norm::kPre, Norm::kPeri, Norm::kPost, Norm::kGru})
      for (const std::string task : {"prefix-sums", "sudoku"}) {
        ModelConfig c = default_config(task, recall, norm, 16);
        c.heads = 2;
        if (recall == Recall::kFixed) c.blocks = 2;
        LoopedTransformer model(c);
        const EngineChoice choice = engine_for(c);
        const torch::Tensor x = torch::randn({1, c.grid.size() == 1 ? c.grid[0] : c.grid[0] * c.grid[1], 16});
        const auto& block = *(*model->recur_blocks)[0]->as<BlockImpl>();
        EXPECT_EQ(choice.fused, fused_block_applies(block, x, model->positions(c.grid))) << choice.describe();
        EXPECT_EQ(choice.fused, norm != Norm::kGru) << choice.describe();
        EXPECT_EQ(choice.describe(), norm == Norm::kGru ? "plain (the gru norm)" : "fused");
      }
  const ModelConfig c = default_config("prefix-sums", Recall::kExternal, Norm::kPost, 64);
  EXPECT_EQ(engine_for(c, "cuda").describe(), "plain (not on the CPU)");
  EXPECT_TRUE(engine_for(c, "cpu", "float32", "bf16-mixed").fused);  // bfloat16 products (model/engine/products.h)
  EXPECT_EQ(engine_for(c, "cpu", "float64", "bf16-mixed").describe(), "plain (bf16-mixed over float64 parameters)");
  EXPECT_EQ(engine_for(c, "cpu", "bfloat16").describe(), "plain (bfloat16 parameters)");
  EXPECT_TRUE(engine_for(c, "cpu", "float64").fused);
  ModelConfig full = default_config("sudoku", Recall::kExternal, Norm::kPost, 64);
  EXPECT_TRUE(engine_for(full).fused);  // 81 tokens, every one a key
  full.grid = {17, 17};
  EXPECT_EQ(engine_for(full).describe(), "plain (full attention over more than 256 tokens)");
  {
    PlainEngine plain;
    EXPECT_EQ(engine_for(c).describe(), "plain (LOOPLAB_ENGINE=plain or a PlainEngine scope)");
  }
}

}  // namespace
}  // namespace looplab
