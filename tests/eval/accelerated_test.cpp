// Early exit and Anderson acceleration (issue 8): early exit's answers against independent
// plain iteration, Anderson against plain iteration on a known contractive affine map, and
// block-evaluation counts against a counting map and a closed form.
#include "looplab/eval/accelerated.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "looplab/eval/evaluate.h"

namespace looplab {
namespace {

// A small prefix-sums model whose map is made contractive (Wx scaled down), so examples
// converge after different numbers of iterations.
LoopedTransformer contractive_model(double wx_scale) {
  torch::manual_seed(11);
  ModelConfig c = default_config("prefix-sums", Recall::kExternal, Norm::kPost, 16);
  c.heads = 2;
  LoopedTransformer model(c);
  torch::NoGradGuard no_grad;
  model->recur_blocks[0]->as<BlockImpl>()->Wx->weight.mul_(wx_scale);
  model->eval();
  return model;
}

double rel_step(const torch::Tensor& next, const torch::Tensor& x) {
  return ((next - x).norm() / x.norm()).item<double>();
}

TEST(Accelerated, PlainWithoutToleranceIsExactlyTheForwardPass) {
  auto model = contractive_model(1.0);
  torch::manual_seed(1);
  const torch::Tensor input = torch::randint(0, 2, {7, 10, 1}).to(torch::kFloat32);
  FixedPointOptions o;
  o.max_iters = 9;
  const FixedPointResult r = solve_model(*model, input, o);
  torch::NoGradGuard no_grad;
  EXPECT_TRUE(torch::equal(r.state, model->forward(input, 9).state));
  EXPECT_EQ(r.total_evaluations, 7 * 9);
  EXPECT_TRUE(torch::equal(r.evaluations, torch::full({7}, 9, torch::kInt64)));
  EXPECT_FALSE(r.converged.any().item<bool>());
}

TEST(Accelerated, EarlyExitAnswersEqualIndependentPlainIteration) {
  auto model = contractive_model(0.3);
  torch::manual_seed(2);
  const int64_t B = 24, L = 12;
  // Inputs of different scales converge at different speeds.
  const torch::Tensor input =
      torch::randn({B, L, 1}) * torch::logspace(-1, 1, B).view({B, 1, 1});
  FixedPointOptions o;
  o.max_iters = 40;
  // The first tolerance at which some examples converge, at different iterations (so that
  // removal from the batch is exercised).
  FixedPointResult r;
  bool spread = false;
  for (double tol : {1e-3, 3e-4, 1e-4, 3e-5, 1e-5, 3e-6, 1e-6}) {
    o.tolerance = tol;
    r = solve_model(*model, input, o);
    spread = r.converged.sum().item<int64_t>() > 0 && std::get<0>(at::_unique(r.evaluations)).size(0) > 1;
    if (spread) break;
  }
  ASSERT_TRUE(spread) << r.evaluations;
  EXPECT_EQ(r.total_evaluations, r.evaluations.sum().item<int64_t>());
  torch::NoGradGuard no_grad;
  const torch::Tensor answers = model->head->forward(r.state).argmax(-1);
  for (int64_t i = 0; i < B; ++i) {
    // Independent: example i alone, plain iteration step by step.
    const torch::Tensor xi = input.slice(0, i, i + 1);
    const int64_t t = r.evaluations[i].item<int64_t>();
    const auto at_t = model->forward(xi, t), before = model->forward(xi, t - 1);
    EXPECT_TRUE(torch::allclose(r.state[i], at_t.state[0], 1e-5, 1e-5)) << i;
    EXPECT_TRUE(torch::equal(answers[i], at_t.logits[0].argmax(-1))) << i;
    const double step = rel_step(at_t.state, before.state);
    if (r.converged[i].item<bool>()) {
      EXPECT_LT(step, o.tolerance * (1 + 1e-3)) << i;
      // ... and not before t.
      for (int64_t s = 1; s < t; ++s)
        EXPECT_GE(rel_step(model->forward(xi, s).state, model->forward(xi, s - 1).state), o.tolerance * (1 - 1e-3)) << i << " " << s;
    } else {
      EXPECT_EQ(t, o.max_iters);
    }
  }
}

TEST(Accelerated, EvaluateWithoutAccelerationMatchesAccuracyAfter) {
  auto model = contractive_model(1.0);
  DataOptions d;
  d.task = "prefix-sums";
  d.val_count = 21;
  d.train_bits = 8;
  Split split = load_split(d, "val");
  {
    torch::NoGradGuard no_grad;
    split.targets = model->forward(split.inputs, 4).logits.argmax(-1);
    split.targets.index_put_({torch::indexing::Slice(0, 6), 0}, 1 - split.targets.index({torch::indexing::Slice(0, 6), 0}));
  }
  FixedPointOptions o;
  o.max_iters = 4;
  const AcceleratedSplitReport e = evaluate_accelerated(*model, split, 8, o);
  const Accuracy a = accuracy_after(*model, split, 4, 8);
  EXPECT_NEAR(e.exact, a.exact, 1e-12);
  EXPECT_NEAR(e.exact, 15.0 / 21.0, 1e-12);
  EXPECT_NEAR(e.per_position, a.per_position, 1e-12);
  EXPECT_EQ(e.block_evaluations, 21 * 4);
  EXPECT_EQ(e.max_evaluations, 4);
}

// f_i(x) = A_i x + b_i with symmetric A_i of spectral radius < 1 (double precision).
struct AffineMaps {
  torch::Tensor A, b, fixed_point;  // [B, n, n], [B, n], [B, n]
  BatchMap map(int64_t* calls = nullptr, torch::Tensor* per_example = nullptr) const {
    return [=](const torch::Tensor& x, const torch::Tensor& index) {
      if (calls) *calls += index.size(0);
      if (per_example) per_example->index_add_(0, index, torch::ones({index.size(0)}, torch::kInt64));
      return torch::bmm(A.index_select(0, index), x.unsqueeze(2)).squeeze(2) + b.index_select(0, index);
    };
  }
};

AffineMaps affine_maps(int64_t B, int64_t n, double lo, double hi) {
  torch::manual_seed(5);
  const auto dbl = torch::TensorOptions().dtype(torch::kFloat64);
  AffineMaps m;
  m.A = torch::empty({B, n, n}, dbl);
  for (int64_t i = 0; i < B; ++i) {
    const torch::Tensor q = std::get<0>(torch::linalg_qr(torch::randn({n, n}, dbl)));
    const torch::Tensor eig = torch::linspace(lo, hi, n, dbl);
    m.A[i] = torch::matmul(q * eig, q.t());
  }
  m.b = torch::randn({B, n}, dbl);
  m.fixed_point = torch::linalg_solve(torch::eye(n, dbl) - m.A, m.b.unsqueeze(2)).squeeze(2);
  return m;
}

TEST(Accelerated, AndersonFindsTheFixedPointOfAnAffineMapInFewerEvaluations) {
  const AffineMaps maps = affine_maps(4, 30, -0.9, 0.97);
  const torch::Tensor x_init = torch::zeros({4, 30}, torch::kFloat64);
  FixedPointOptions plain;
  plain.max_iters = 5000;
  plain.tolerance = 1e-10;
  FixedPointOptions anderson = plain;
  anderson.anderson = 10;
  anderson.lambda = 1e-10;
  const FixedPointResult p = solve_fixed_point(maps.map(), x_init, plain);
  const FixedPointResult a = solve_fixed_point(maps.map(), x_init, anderson);
  ASSERT_TRUE(p.converged.all().item<bool>());
  ASSERT_TRUE(a.converged.all().item<bool>());
  for (const auto* r : {&p, &a}) {
    const double err = ((r->state - maps.fixed_point).norm(2, 1) / maps.fixed_point.norm(2, 1)).max().item<double>();
    EXPECT_LT(err, 1e-7);
  }
  // Plain iteration contracts by 0.97 per step: about log(1e-10) / log(0.97) ~ 750 steps.
  EXPECT_GT(p.total_evaluations, 4 * 500);
  EXPECT_LT(a.total_evaluations * 5, p.total_evaluations);
  EXPECT_LT(a.evaluations.max().item<int64_t>(), 100);
}

TEST(Accelerated, AndersonSafeguardKeepsANonNormalMapConverging) {
  // A strongly non-normal contraction (large off-diagonal coupling): residuals are not
  // monotone, so the safeguard has work to do; the iteration must still reach the fixed point.
  const int64_t n = 12;
  const auto dbl = torch::TensorOptions().dtype(torch::kFloat64);
  torch::Tensor A = torch::diag(torch::full({n}, 0.8, dbl)) + torch::diag(torch::full({n - 1}, 1.5, dbl), 1);
  A = A.unsqueeze(0).repeat({3, 1, 1});
  const torch::Tensor b = torch::randn({3, n}, dbl);
  const BatchMap f = [&](const torch::Tensor& x, const torch::Tensor& index) {
    return torch::bmm(A.index_select(0, index), x.unsqueeze(2)).squeeze(2) + b.index_select(0, index);
  };
  FixedPointOptions o;
  o.max_iters = 3000;
  o.tolerance = 1e-9;
  o.anderson = 3;
  const FixedPointResult r = solve_fixed_point(f, torch::zeros({3, n}, dbl), o);
  ASSERT_TRUE(r.converged.all().item<bool>());
  const torch::Tensor x_star = torch::linalg_solve(torch::eye(n, dbl) - A, b.unsqueeze(2)).squeeze(2);
  // I - A is badly conditioned (entries of its inverse grow like 7.5^j), so a relative step
  // of 1e-9 bounds the error only loosely.
  EXPECT_LT(((r.state - x_star).norm() / x_star.norm()).item<double>(), 1e-3);
  EXPECT_LT(r.evaluations.max().item<int64_t>(), 600);
}

TEST(Accelerated, EvaluationCountsAreExact) {
  // f_i(x) = a + c_i (x - a): x_t = a + c_i^t (x_0 - a); the first t with relative step
  // ||x_t - x_{t-1}|| / ||x_{t-1}|| < tol is computed here by a scalar loop.
  const auto dbl = torch::TensorOptions().dtype(torch::kFloat64);
  const std::vector<double> c = {0.1, 0.5, 0.8, 0.9, 0.95, 0.99, -0.7};
  const int64_t B = static_cast<int64_t>(c.size());
  const double a = 2.0, x_start = -1.0, tol = 1e-4;
  const int64_t max_evals = 300;
  const torch::Tensor cs = torch::tensor(c, dbl);
  int64_t calls = 0;
  torch::Tensor per_example = torch::zeros({B}, torch::kInt64);
  const BatchMap f = [&](const torch::Tensor& x, const torch::Tensor& index) {
    calls += index.size(0);
    per_example.index_add_(0, index, torch::ones({index.size(0)}, torch::kInt64));
    return a + cs.index_select(0, index).unsqueeze(1) * (x - a);
  };
  FixedPointOptions o;
  o.max_iters = max_evals;
  o.tolerance = tol;
  const FixedPointResult r = solve_fixed_point(f, torch::full({B, 3}, x_start, dbl), o);
  EXPECT_EQ(r.total_evaluations, calls);
  EXPECT_TRUE(torch::equal(r.evaluations, per_example));
  for (int64_t i = 0; i < B; ++i) {
    double x = x_start;
    int64_t expected = max_evals;
    bool converged = false;
    for (int64_t t = 1; t <= max_evals; ++t) {
      const double next = a + c[i] * (x - a);
      const bool done = std::abs(next - x) / std::abs(x) < tol;
      x = next;
      if (done) {
        expected = t;
        converged = true;
        break;
      }
    }
    EXPECT_EQ(r.evaluations[i].item<int64_t>(), expected) << c[i];
    EXPECT_EQ(r.converged[i].item<bool>(), converged) << c[i];
    EXPECT_NEAR(r.state[i][0].item<double>(), x, 1e-12) << c[i];
  }
  EXPECT_FALSE(r.converged[5].item<bool>());  // c = 0.99 needs more than 300 steps

  // Anderson: the counting map agrees with the reported counts too.
  const AffineMaps maps = affine_maps(5, 20, -0.5, 0.95);
  int64_t anderson_calls = 0;
  torch::Tensor anderson_per_example = torch::zeros({5}, torch::kInt64);
  FixedPointOptions ao;
  ao.max_iters = 400;
  ao.tolerance = 1e-8;
  ao.anderson = 4;
  const FixedPointResult ar =
      solve_fixed_point(maps.map(&anderson_calls, &anderson_per_example), torch::zeros({5, 20}, dbl), ao);
  EXPECT_EQ(ar.total_evaluations, anderson_calls);
  EXPECT_TRUE(torch::equal(ar.evaluations, anderson_per_example));
}

}  // namespace
}  // namespace looplab
