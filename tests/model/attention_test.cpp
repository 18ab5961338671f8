// N-D RoPE and neighbourhood attention against independent computations.
#include <gtest/gtest.h>

#include <algorithm>

#include "looplab/model/engine/engine.h"
#include "looplab/model/looped_transformer.h"
#include "looplab/tasks/registry.h"
#include "looplab/util/error.h"

namespace looplab {
namespace {

// A rotated q.k must depend only on the offset between the two positions.
TEST(Rope, DotProductDependsOnlyOnOffset1D) {
  torch::manual_seed(3);
  const int64_t hd = 8, L = 20;
  const torch::Tensor angles = rope_angles({L}, hd, 10000.0);
  const torch::Tensor q = torch::randn({hd}, torch::kFloat64), k = torch::randn({hd}, torch::kFloat64);
  const torch::Tensor rq = apply_rope(q.expand({L, hd}), angles.cos(), angles.sin());
  const torch::Tensor rk = apply_rope(k.expand({L, hd}), angles.cos(), angles.sin());
  for (int64_t offset : {0, 1, 3, 7}) {
    const double ref = (rq[offset] * rk[0]).sum().item<double>();
    for (int64_t j = 1; j + offset < L; ++j)
      EXPECT_NEAR((rq[j + offset] * rk[j]).sum().item<double>(), ref, 1e-10) << "offset " << offset;
  }
  // Rotation keeps norms, and position 0 is not rotated.
  EXPECT_NEAR(rq[13].norm().item<double>(), q.norm().item<double>(), 1e-12);
  EXPECT_TRUE(torch::allclose(rq[0], q));
}

TEST(Rope, DotProductDependsOnlyOnOffset2D) {
  torch::manual_seed(4);
  const int64_t hd = 8, R = 5, C = 6;
  const torch::Tensor angles = rope_angles({R, C}, hd, 10000.0);
  ASSERT_EQ(angles.sizes(), (std::vector<int64_t>{R * C, hd / 2}));
  const torch::Tensor q = torch::randn({hd}, torch::kFloat64), k = torch::randn({hd}, torch::kFloat64);
  const torch::Tensor rq = apply_rope(q.expand({R * C, hd}), angles.cos(), angles.sin());
  const torch::Tensor rk = apply_rope(k.expand({R * C, hd}), angles.cos(), angles.sin());
  auto dot = [&](int64_t r1, int64_t c1, int64_t r2, int64_t c2) {
    return (rq[r1 * C + c1] * rk[r2 * C + c2]).sum().item<double>();
  };
  EXPECT_NEAR(dot(2, 3, 1, 1), dot(3, 4, 2, 2), 1e-10);
  EXPECT_NEAR(dot(2, 3, 1, 1), dot(4, 5, 3, 3), 1e-10);
  EXPECT_NEAR(dot(0, 5, 4, 0), dot(0, 5, 4, 0), 0);
  EXPECT_GT(std::abs(dot(2, 3, 1, 1) - dot(2, 3, 1, 2)), 1e-6);  // a different offset differs
  // The first half of the angles follow the row, the second half the column (k_max = 2).
  EXPECT_DOUBLE_EQ(angles[1 * C + 4][0].item<double>(), 1.0);
  EXPECT_DOUBLE_EQ(angles[1 * C + 4][2].item<double>(), 4.0);
  EXPECT_NEAR(angles[1 * C + 4][1].item<double>(), 0.01, 1e-15);  // 10000^(-1/2)
}

// The plain attention rotates q and k as x C + swap(x) S from Positions' interleaved tables:
// the same values as the pairwise formula, bit for bit (a - b is a + (-b), addition commutes),
// in float32 and float64, on a 1-D and a 2-D grid, on a non-contiguous view as the block passes.
TEST(Rope, PairsEqualThePairwiseFormulaBitForBit) {
  torch::manual_seed(9);
  for (auto dtype : {torch::kFloat32, torch::kFloat64})
    for (const std::vector<int64_t>& grid : {std::vector<int64_t>{32}, std::vector<int64_t>{9, 9}}) {
      ModelConfig cfg = default_config(grid.size() == 1 ? "prefix-sums" : "sudoku", Recall::kNone, Norm::kPre, 32);
      cfg.heads = 2;
      LoopedTransformer model(cfg);
      model->to(dtype);
      const Positions p = model->positions(grid);
      const int64_t L = p.cos.size(0), hd = 16;
      // [3, B, heads, L, hd] as the block's permuted qkv view, q and k rotated together.
      const torch::Tensor qkv = torch::randn({2, L, 3, 2, hd}, dtype).permute({2, 0, 3, 1, 4});
      const torch::Tensor got = apply_rope_pairs(qkv.narrow(0, 0, 2), p.pair_cos, p.pair_sin);
      EXPECT_TRUE(torch::equal(got[0], apply_rope(qkv[0], p.cos, p.sin)));
      EXPECT_TRUE(torch::equal(got[1], apply_rope(qkv[1], p.cos, p.sin)));
    }
}

TEST(NeighbourhoodIndex, WindowsShiftAtTheBorders) {
  const torch::Tensor idx = neighbourhood_index({12}, 5);
  ASSERT_EQ(idx.sizes(), (std::vector<int64_t>{12, 5}));
  auto row = [&](int64_t i) {
    std::vector<int64_t> v(idx[i].data_ptr<int64_t>(), idx[i].data_ptr<int64_t>() + 5);
    return v;
  };
  EXPECT_EQ(row(0), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(row(1), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(row(2), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(row(5), (std::vector<int64_t>{3, 4, 5, 6, 7}));
  EXPECT_EQ(row(10), (std::vector<int64_t>{7, 8, 9, 10, 11}));
  EXPECT_EQ(row(11), (std::vector<int64_t>{7, 8, 9, 10, 11}));
  EXPECT_EQ(neighbourhood_index({3}, 5).sizes(), (std::vector<int64_t>{3, 3}));  // shorter than w: all keys
}

// The window mask written out directly from SPEC's definition.
bool in_window(int64_t i, int64_t j, int64_t n, int64_t w) {
  if (n <= w) return true;
  const int64_t s = std::clamp<int64_t>(i - w / 2, 0, n - w);
  return j >= s && j < s + w;
}

torch::Tensor window_mask(const std::vector<int64_t>& grid, int64_t w) {
  int64_t L = 1;
  for (int64_t g : grid) L *= g;
  torch::Tensor allowed = torch::zeros({L, L}, torch::kBool);
  for (int64_t a = 0; a < L; ++a)
    for (int64_t b = 0; b < L; ++b) {
      bool ok = true;
      int64_t ra = a, rb = b;
      for (int64_t axis = static_cast<int64_t>(grid.size()) - 1; axis >= 0; --axis) {
        ok = ok && in_window(ra % grid[axis], rb % grid[axis], grid[axis], w);
        ra /= grid[axis];
        rb /= grid[axis];
      }
      allowed[a][b] = ok;
    }
  return allowed;
}

// Full attention computed step by step with the window as an explicit -inf mask.
torch::Tensor masked_full_attention(AttentionImpl& attn, const torch::Tensor& u, const Positions& p,
                                    const torch::Tensor& allowed) {
  const int64_t B = u.size(0), L = u.size(1), d = u.size(2), h = attn.heads, hd = d / h;
  auto qkv = attn.qkv(u).view({B, L, 3, h, hd}).permute({2, 0, 3, 1, 4});
  auto q = attn.q_norm(apply_rope(qkv[0], p.cos, p.sin));
  auto k = attn.k_norm(apply_rope(qkv[1], p.cos, p.sin));
  auto scores = torch::matmul(q, k.transpose(-1, -2)) / std::sqrt(static_cast<double>(hd));
  scores = scores.masked_fill(allowed.logical_not(), -std::numeric_limits<double>::infinity());
  auto out = torch::matmul(torch::softmax(scores, -1), qkv[2]);
  return attn.out_proj(out.transpose(1, 2).reshape({B, L, d}));
}

TEST(NeighbourhoodAttention, EqualsFullAttentionUnderTheWindowMask) {
  torch::manual_seed(5);
  struct Case {
    std::vector<int64_t> grid;
    int64_t window;
  };
  // Short sequences take the dense masked path, long ones the gathered windows: both are checked.
  for (const Case& c : {Case{{12}, 5}, Case{{5}, 5}, Case{{3}, 5}, Case{{40}, 7}, Case{{41}, 5}, Case{{100}, 5},
                        Case{{6, 7}, 3}, Case{{9, 9}, 5}, Case{{4, 4}, 3}}) {
    ModelConfig cfg = default_config(c.grid.size() == 1 ? "prefix-sums" : "sudoku", Recall::kNone, Norm::kPre, 16);
    cfg.heads = 2;
    cfg.window = c.window;
    cfg.neighbourhood_attention = true;
    cfg.grid = c.grid;
    LoopedTransformer model(cfg);
    model->to(torch::kFloat64);
    auto& attn = *model->recur_blocks[0]->as<BlockImpl>()->attn;
    const Positions p = model->positions(c.grid);
    int64_t L = 1, keys = 1;
    for (int64_t g : c.grid) L *= g, keys *= std::min(g, c.window);
    ASSERT_EQ(p.window_bias.defined(), L <= kDenseWindowFactor * keys);
    ASSERT_NE(p.window.defined(), p.window_bias.defined());
    const torch::Tensor u = torch::randn({2, p.cos.size(0), 16}, torch::kFloat64);
    const torch::Tensor got = attn.forward(u, p);
    const torch::Tensor want = masked_full_attention(attn, u, p, window_mask(c.grid, c.window));
    EXPECT_LT((got - want).abs().max().item<double>(), 1e-12) << "grid size " << c.grid.size() << " window " << c.window;
  }
}

TEST(FullAttention, EqualsMaskedAttentionWithNothingMasked) {
  torch::manual_seed(6);
  ModelConfig cfg = default_config("chess", Recall::kNone, Norm::kPre, 16);
  cfg.heads = 2;
  LoopedTransformer model(cfg);
  model->to(torch::kFloat64);
  auto& attn = *model->recur_blocks[0]->as<BlockImpl>()->attn;
  const Positions p = model->positions({8, 8});
  EXPECT_FALSE(p.window.defined() || p.window_bias.defined());
  const torch::Tensor u = torch::randn({2, 64, 16}, torch::kFloat64);
  const torch::Tensor want = masked_full_attention(attn, u, p, torch::ones({64, 64}, torch::kBool));
  EXPECT_LT((attn.forward(u, p) - want).abs().max().item<double>(), 1e-12);
}


// The first iteration after which the last of L positions depends on input 0, from the window
// rule of SPEC section 1 alone: query j sees keys s .. s+4, s = clamp(j - 2, 0, L - 5); each
// iteration a token's dependence reaches the leftmost dependence of its window.
int64_t iterations_to_reach_the_end(int64_t L) {
  std::vector<int64_t> leftmost(L);
  for (int64_t j = 0; j < L; ++j) leftmost[j] = j;
  for (int64_t t = 1;; ++t) {
    std::vector<int64_t> next(L);
    for (int64_t j = 0; j < L; ++j) {
      const int64_t s = std::clamp<int64_t>(j - 2, 0, L - 5);
      next[j] = *std::min_element(leftmost.begin() + s, leftmost.begin() + s + 5);
    }
    leftmost = next;
    if (leftmost[L - 1] == 0) return t;
  }
}

// Why no iteration scheme reaches a 512-bit answer in few block evaluations (docs/performance.md):
// the answer at bit 511 depends on bit 0 only from iteration 255 on.
TEST(NeighbourhoodAttention, The512BitAnswerNeedsAtLeast255Iterations) {
  EXPECT_EQ(iterations_to_reach_the_end(512), 255);
  EXPECT_EQ(iterations_to_reach_the_end(32), 15);
}

// The model obeys that light cone: flipping input 0 leaves the last token's state untouched
// before that iteration, and changes it at that iteration (dense masked and gathered windows).
// (Bit-exact zeros before: the masked keys enter with softmax weight exactly 0.)
TEST(NeighbourhoodAttention, InformationMovesNoFasterThanTheWindow) {
  for (int64_t L : {12, 24, 64}) {
    torch::manual_seed(8);
    ModelConfig c = default_config("prefix-sums", Recall::kExternal, Norm::kPost, 8);
    c.heads = 2;
    LoopedTransformer model(c);
    model->to(torch::kFloat64);
    torch::NoGradGuard no_grad;
    const torch::Tensor a = torch::randint(0, 2, {1, L, 1}).to(torch::kFloat64);
    torch::Tensor b = a.clone();
    b[0][0][0] = 1 - a[0][0][0].item<double>();
    const int64_t reach = iterations_to_reach_the_end(L);
    for (int64_t t = 1; t <= reach; ++t) {
      const double change =
          (model->forward(a, t).state[0][L - 1] - model->forward(b, t).state[0][L - 1]).abs().max().item<double>();
      if (t < reach)
        EXPECT_EQ(change, 0.0) << "L " << L << " iteration " << t;
      else if (L <= 24)  // the untrained block damps the signal per hop: after 31 hops it is below rounding
        EXPECT_GT(change, 0.0) << "L " << L << " iteration " << t;
    }
  }
}

}  // namespace
}  // namespace looplab

namespace looplab {
namespace {

// Mazes (issue 50): a 2-D grid of any square side, 3 x 3 windows.
//
// NATTEN's 2-D window (csrc/include/natten/cuda/reference/mask.hpp, get_win_start, stride and
// dilation 1): along each axis, start = max(i - k/2, 0) + (i + k/2 >= L) (L - k/2 - i - 1), the
// k keys from there. Written out here for a 4 x 4 grid and k = 3, query (row, column) -> keys.
TEST(NeighbourhoodIndex, MazesWindowIsNattens2D) {
  const ModelConfig c = default_config("mazes", Recall::kExternal, Norm::kPost, 32);
  ASSERT_EQ(c.window, 3);
  const torch::Tensor idx = neighbourhood_index(grid_for(c, 16), c.window);
  ASSERT_EQ(idx.sizes(), (std::vector<int64_t>{16, 9}));
  auto keys = [&](int64_t r, int64_t col) {
    std::vector<int64_t> v(idx[r * 4 + col].data_ptr<int64_t>(), idx[r * 4 + col].data_ptr<int64_t>() + 9);
    std::sort(v.begin(), v.end());
    return v;
  };
  EXPECT_EQ(keys(0, 0), (std::vector<int64_t>{0, 1, 2, 4, 5, 6, 8, 9, 10}));      // rows 0-2, columns 0-2
  EXPECT_EQ(keys(3, 3), (std::vector<int64_t>{5, 6, 7, 9, 10, 11, 13, 14, 15}));  // rows 1-3, columns 1-3
  EXPECT_EQ(keys(1, 2), (std::vector<int64_t>{1, 2, 3, 5, 6, 7, 9, 10, 11}));     // rows 0-2, columns 1-3
  EXPECT_EQ(keys(2, 0), (std::vector<int64_t>{4, 5, 6, 8, 9, 10, 12, 13, 14}));   // rows 1-3, columns 0-2
  EXPECT_EQ(keys(1, 1), (std::vector<int64_t>{0, 1, 2, 4, 5, 6, 8, 9, 10}));      // centred: rows 0-2, columns 0-2
  // The formula above for every query of a 7 x 7 grid against the index.
  auto start = [](int64_t i, int64_t L, int64_t k) {
    const int64_t r = k / 2;
    return std::max<int64_t>(i - r, 0) + (i + r >= L ? L - r - i - 1 : 0);
  };
  const torch::Tensor big = neighbourhood_index(grid_for(c, 49), 3);
  for (int64_t q = 0; q < 49; ++q) {
    std::vector<int64_t> want;
    for (int64_t dr = 0; dr < 3; ++dr)
      for (int64_t dc = 0; dc < 3; ++dc) want.push_back((start(q / 7, 7, 3) + dr) * 7 + start(q % 7, 7, 3) + dc);
    std::vector<int64_t> got(big[q].data_ptr<int64_t>(), big[q].data_ptr<int64_t>() + 9);
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want) << "query " << q;
  }
}

TEST(NeighbourhoodAttention, MazesTakeAnySquareGrid) {
  const ModelConfig c = default_config("mazes", Recall::kExternal, Norm::kPost, 32);
  EXPECT_EQ(grid_for(c, 25), (std::vector<int64_t>{5, 5}));
  EXPECT_EQ(grid_for(c, 900), (std::vector<int64_t>{30, 30}));
  EXPECT_EQ(grid_for(c, 10201), (std::vector<int64_t>{101, 101}));
  try {
    grid_for(c, 24);
    ADD_FAILURE() << "24 positions taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("24 is not a square"), std::string::npos) << e.what();
  }
  // A sudoku model's grid stays fixed.
  EXPECT_THROW(grid_for(default_config("sudoku", Recall::kExternal, Norm::kPost, 32), 100), Error);
  // The attention on the training grid (dense mask), on 12 x 12 and 30 x 30 cells (gathered
  // windows) equals full attention under the window mask.
  torch::manual_seed(12);
  ModelConfig cfg = c;
  cfg.heads = 2;
  LoopedTransformer model(cfg);
  model->to(torch::kFloat64);
  auto& attn = *model->recur_blocks[0]->as<BlockImpl>()->attn;
  for (int64_t side : {5, 12, 30}) {
    const std::vector<int64_t> grid = grid_for(cfg, side * side);
    const Positions p = model->positions(grid);
    const torch::Tensor u = torch::randn({2, side * side, 32}, torch::kFloat64);
    const torch::Tensor want = masked_full_attention(attn, u, p, window_mask(grid, 3));
    EXPECT_LT((attn.forward(u, p) - want).abs().max().item<double>(), 1e-12) << side;
  }
}

// A maze model runs a 30 x 30 maze (size 59) on the fused CPU engine and on the plain path alike.
TEST(NeighbourhoodAttention, MazesRunOnTheFusedEngineAndThePlainPath) {
  torch::manual_seed(13);
  ModelConfig cfg = default_config("mazes", Recall::kExternal, Norm::kPost, 32);
  cfg.heads = 2;
  LoopedTransformer model(cfg);
  const Examples e = task("mazes").synthetic(2, 900, 5);
  const torch::Tensor input = torch::from_blob(const_cast<float*>(e.inputs.data()), {2, 900, e.channels}).clone();
  torch::NoGradGuard no_grad;
  const torch::Tensor fused = model->forward(input, 8).logits;
  torch::Tensor plain;
  {
    PlainEngine scope;
    plain = model->forward(input, 8).logits;
  }
  ASSERT_EQ(fused.sizes(), (std::vector<int64_t>{2, 900, 2}));
  auto& block = *model->recur_blocks[0]->as<BlockImpl>();
  ASSERT_TRUE(fused_block_applies(block, torch::randn({2, 900, 32}), model->positions({30, 30})));
  EXPECT_LT(((fused - plain).norm() / plain.norm()).item<double>(), 1e-5);
}

}  // namespace
}  // namespace looplab
