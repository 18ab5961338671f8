// The fixed-point analysis against independent computations: a dense Jacobian built row by row
// with plain reverse mode, dense eigenvalues, a dense linear solve, finite differences.
#include <gtest/gtest.h>

#include <cmath>

#include "looplab/analysis/fixed_point.h"

namespace looplab::analysis {
namespace {

// A tiny prefix-sums model (width 8, 2 heads, 4 positions) in double precision, made
// contractive by shrinking its recall and sublayer weights so that fixed points exist and are
// reached (the condition under which proposition 5 holds).
struct Tiny {
  LoopedTransformer model{nullptr};
  Positions p;
  torch::Tensor x0;
};

Tiny tiny(Recall recall, Norm norm, double shrink, int64_t batch = 1, bool full_attention = false) {
  torch::manual_seed(3);
  ModelConfig c = default_config("prefix-sums", recall, norm, 8);
  c.heads = 2;
  if (full_attention) c.neighbourhood_attention = false;
  Tiny t;
  t.model = LoopedTransformer(c);
  t.model->to(torch::kFloat64);
  {
    torch::NoGradGuard no_grad;
    for (auto& item : t.model->named_parameters())
      if (item.key().find("recur_blocks") == 0 && item.key().find("norm") == std::string::npos)
        item.value().mul_(shrink);
    for (auto& param : t.model->parameters()) param.requires_grad_(false);
  }
  t.p = t.model->positions({4});
  const torch::Tensor input = torch::randint(0, 2, {batch, 4, 1}, torch::kInt64).to(torch::kFloat64);
  {
    torch::NoGradGuard no_grad;
    t.x0 = Loop(*t.model, input).x0();
  }
  return t;
}

// df/dx at (x, x0) as a dense [n, n] matrix, one plain backward pass per output entry.
torch::Tensor dense_jacobian(LoopedTransformerImpl& model, const torch::Tensor& x, const torch::Tensor& x0,
                             const Positions& p) {
  torch::AutoGradMode on(true);
  const torch::Tensor xin = x.detach().clone().requires_grad_(true);
  (void)p;
  const torch::Tensor y = Loop::from_x0(model, x0).step(xin).reshape({-1});
  const int64_t n = y.numel();
  torch::Tensor J = torch::zeros({n, n}, torch::kFloat64);
  for (int64_t o = 0; o < n; ++o) {
    auto g = torch::autograd::grad({y[o]}, {xin}, {}, /*retain_graph=*/true);
    J[o] = g[0].reshape({-1});
  }
  return J;
}

double dense_radius(const torch::Tensor& J) { return torch::linalg_eigvals(J).abs().max().item<double>(); }

TEST(FixedPoint, JacobianVectorProductsMatchTheDenseJacobian) {
  for (Recall recall : {Recall::kExternal, Recall::kInternal, Recall::kNone}) {
    Tiny t = tiny(recall, Norm::kPost, 1.0);
    const torch::Tensor x = run_from(Loop::from_x0(*t.model, t.x0), {}, 5);
    const torch::Tensor J = dense_jacobian(*t.model, x, t.x0, t.p);
    Linearization lin(*t.model, x, t.x0);
    const torch::Tensor v = torch::randn_like(x);
    const torch::Tensor expected = torch::matmul(J, v.reshape({-1}));
    EXPECT_LT((lin.state_jvp(v).reshape({-1}) - expected).abs().max().item<double>(), 1e-10) << to_string(recall);
  }
}

// Full attention runs through scaled_dot_product_attention, whose backward is not differentiable
// again; the Linearization's PlainEngine scope must switch it to the plain formula, or its
// double backward fails or is wrong.
TEST(FixedPoint, DoubleBackwardThroughFullAttentionUnderThePlainScope) {
  Tiny t = tiny(Recall::kExternal, Norm::kPost, 1.0, 2, /*full_attention=*/true);
  ASSERT_FALSE(t.model->config().neighbourhood_attention);
  const torch::Tensor x = run_from(Loop::from_x0(*t.model, t.x0), {}, 5);
  const torch::Tensor J = dense_jacobian(*t.model, x, t.x0, t.p);
  Linearization lin(*t.model, x, t.x0);
  const torch::Tensor v = torch::randn_like(x);
  const torch::Tensor expected = torch::matmul(J, v.reshape({-1}));
  EXPECT_GT(expected.abs().max().item<double>(), 1e-3);
  EXPECT_LT((lin.state_jvp(v).reshape({-1}) - expected).abs().max().item<double>(), 1e-10);
}

TEST(FixedPoint, ArnoldiRadiusMatchesDenseEigenvaluesOnATinyModel) {
  for (Norm norm : {Norm::kPost, Norm::kPre, Norm::kPeri}) {
    for (Recall recall : {Recall::kExternal, Recall::kInternal, Recall::kNone}) {
      Tiny t = tiny(recall, norm, 1.0);
      const torch::Tensor x = run_from(Loop::from_x0(*t.model, t.x0), {}, 20);
      const double expected = dense_radius(dense_jacobian(*t.model, x, t.x0, t.p));
      Linearization lin(*t.model, x, t.x0);
      const SpectralRadius r =
          spectral_radius([&](const torch::Tensor& v) { return lin.state_jvp(v); }, x, /*max_steps=*/40, 1e-10);
      EXPECT_TRUE(r.converged) << to_string(recall) << " " << to_string(norm);
      EXPECT_NEAR(r.radius, expected, 1e-4) << to_string(recall) << " " << to_string(norm);
    }
  }
}

TEST(FixedPoint, ArnoldiFindsAComplexLeadingPair) {
  // Eigenvalues 0.9 e^{+-i}, 0.8, 0.5, -0.3 ... in a non-normal basis: power iteration
  // oscillates on such a pair, Arnoldi must not.
  torch::manual_seed(5);
  const int64_t n = 12;
  torch::Tensor D = torch::zeros({n, n}, torch::kFloat64);
  D[0][0] = 0.9 * std::cos(1.0);
  D[0][1] = -0.9 * std::sin(1.0);
  D[1][0] = 0.9 * std::sin(1.0);
  D[1][1] = 0.9 * std::cos(1.0);
  for (int64_t i = 2; i < n; ++i) D[i][i] = 0.8 - 0.1 * static_cast<double>(i);
  const torch::Tensor S = torch::eye(n, torch::kFloat64) + 0.3 * torch::randn({n, n}, torch::kFloat64);
  const torch::Tensor A = torch::matmul(torch::matmul(S, D), torch::linalg_inv(S));
  const SpectralRadius r = spectral_radius([&](const torch::Tensor& v) { return torch::matmul(A, v); },
                                           torch::zeros({n}, torch::kFloat64), 40, 1e-12);
  EXPECT_TRUE(r.converged);
  EXPECT_NEAR(r.radius, 0.9, 1e-10);
  EXPECT_NEAR(std::abs(r.eigenvalue.imag()), 0.9 * std::sin(1.0), 1e-8);
}

TEST(FixedPoint, GmresSolvesIdentityMinusA) {
  torch::manual_seed(6);
  const int64_t n = 30;
  const torch::Tensor A = 0.1 * torch::randn({n, n}, torch::kFloat64);
  const torch::Tensor b = torch::randn({n}, torch::kFloat64);
  const LinearSolve s = solve_identity_minus([&](const torch::Tensor& v) { return torch::matmul(A, v); }, b, 100, 1e-13);
  const torch::Tensor expected = torch::linalg_solve(torch::eye(n, torch::kFloat64) - A, b);
  EXPECT_LT((s.solution - expected).abs().max().item<double>(), 1e-10);
  EXPECT_LT(s.residual, 1e-12);
}

TEST(FixedPoint, ImplicitSensitivityMatchesFiniteDifferencesWhereTheRadiusIsBelowOne) {
  // Internal recall without outer normalization keeps the identity path x + h(.), so it does
  // not contract here: left out.
  const std::vector<std::pair<Recall, Norm>> variants = {
      {Recall::kExternal, Norm::kPost}, {Recall::kExternal, Norm::kPre}, {Recall::kInternal, Norm::kPost}};
  for (const auto& [recall, norm] : variants) {
    {
      Tiny t = tiny(recall, norm, 0.5);
      FixedPointOptions s;
  s.tolerance = 1e-4;  // the analysis's default
      s.max_iters = 300;
      s.tolerance = 1e-12;
      torch::Tensor reached;
      const auto c = convergence(Loop::from_x0(*t.model, t.x0), s, &reached);
      ASSERT_EQ(c[0].behaviour, Behaviour::kSettle) << to_string(recall) << " " << to_string(norm);
      const double rho = dense_radius(dense_jacobian(*t.model, reached, t.x0, t.p));
      ASSERT_LT(rho, 1.0) << "the premise of the test: a contractive fixed point";
      const torch::Tensor v = torch::randn_like(t.x0);
      const Sensitivity sens = input_sensitivity(*t.model, t.x0, reached, v, 300);
      EXPECT_GT(sens.implicit_norm, 1e-6) << "recall models depend on their input";
      EXPECT_LT(sens.relative_difference, 1e-3) << to_string(recall) << " " << to_string(norm) << " rho " << rho;
      EXPECT_LT(sens.solve.residual, 1e-9);
    }
  }
}

TEST(FixedPoint, ContractiveModelsSettleAndForgetTheirStart) {
  Tiny t = tiny(Recall::kExternal, Norm::kPost, 0.5, /*batch=*/3);
  FixedPointOptions s;
  s.tolerance = 1e-4;  // the analysis's default
  s.max_iters = 200;
  s.tolerance = 1e-8;
  const auto c = convergence(Loop::from_x0(*t.model, t.x0), s);
  for (const Convergence& e : c) {
    EXPECT_EQ(e.behaviour, Behaviour::kSettle);
    EXPECT_GT(e.first_below, 1);
    EXPECT_LT(e.final_step, 1e-8);
  }
  const InitIndependence ind = init_independence(Loop::from_x0(*t.model, t.x0), 200, 0);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_LT(ind.x0_vs_zero[i], 1e-8);
    EXPECT_LT(ind.x0_vs_noise[i], 1e-8);
  }
}

TEST(FixedPoint, AnExpandingRecallDiverges) {
  // Pre-norm leaves the residual stream unbounded; a recall matrix of 3 I makes it grow ~3x
  // per iteration.
  Tiny t = tiny(Recall::kExternal, Norm::kPre, 1.0);
  {
    torch::NoGradGuard no_grad;
    auto& Wx = t.model->recur_blocks[0]->as<BlockImpl>()->Wx;
    Wx->weight.copy_(3 * torch::eye(8, torch::kFloat64));
  }
  FixedPointOptions s;
  s.tolerance = 1e-4;  // the analysis's default
  s.max_iters = 60;
  const auto c = convergence(Loop::from_x0(*t.model, t.x0), s);
  EXPECT_EQ(c[0].behaviour, Behaviour::kDiverge);
  const std::vector<double> rho = recall_spectral_radius(*t.model);
  ASSERT_EQ(rho.size(), 1u);
  EXPECT_NEAR(rho[0], 3.0, 1e-12);
}

TEST(FixedPoint, APeriodTwoMapIsACycle) {
  // External recall with pre-norm and every other block weight zero: f(x) = Wx x + Wh x0
  // (both sublayers add zero), so Wx = -I with Wh = 0 gives x -> -x, a cycle of period 2.
  Tiny t = tiny(Recall::kExternal, Norm::kPre, 0.0);
  {
    torch::NoGradGuard no_grad;
    auto* block = t.model->recur_blocks[0]->as<BlockImpl>();
    block->Wx->weight.copy_(-torch::eye(8, torch::kFloat64));
  }
  FixedPointOptions s;
  s.tolerance = 1e-4;  // the analysis's default
  s.max_iters = 11;
  const auto c = convergence(Loop::from_x0(*t.model, t.x0), s);
  EXPECT_EQ(c[0].behaviour, Behaviour::kCycle);
  EXPECT_EQ(c[0].period, 2);
}

}  // namespace
}  // namespace looplab::analysis
