// Fixed-point analysis of a trained looped model (SPEC section 4; paper sections 3-5, appendix
// A): whether the iteration x_{t+1} = f(x_t, x0) reaches a fixed point (reachability), how the
// fixed point moves with the input (input dependence, proposition 5) and whether it forgets
// where the iteration started (initialization independence, appendix A.8).
//
// Jacobians are never formed: df/dx v and df/dx0 v come from two reverse-mode passes (the
// double-backward trick), so the analysis runs at any size and with any LibTorch version.
#pragma once

#include <torch/torch.h>

#include <complex>
#include <functional>
#include <string>
#include <vector>

#include "looplab/eval/fixed_point_options.h"
#include "looplab/model/looped_transformer.h"

namespace looplab::analysis {

// ---- Reachability: does the iteration settle? ------------------------------------------------

// settle: the last relative step is below the tolerance. cycle: x_T is within the tolerance of
// x_{T-p} for a period 2 <= p <= max_period. diverge: the state blew up. wander: none of these
// within max_iters.
enum class Behaviour { kSettle, kCycle, kDiverge, kWander };
const char* to_string(Behaviour b);

struct Convergence {
  int64_t first_below = -1;  // first t with relative step below the tolerance; -1 if never
  double final_step = 0;     // relative step of iteration max_iters
  Behaviour behaviour = Behaviour::kWander;
  int64_t period = 0;        // cycles only
};

// The states of a batch run for `iterations` iterations from `start` (x0 when undefined),
// without gradient.
torch::Tensor run_from(const Loop& loop, const torch::Tensor& start, int64_t iterations);

// Classifies every example of a batch by options.max_iters, tolerance, max_period and
// diverge_ratio; the reached states go to `reached`. `observe(t, x_t)`, when given, sees every
// state (t = 1..max_iters), e.g. to score answers.
using StateObserver = std::function<void(int64_t, const torch::Tensor&)>;
std::vector<Convergence> convergence(const Loop& loop, const FixedPointOptions& options, torch::Tensor* reached = nullptr,
                                     const StateObserver& observe = nullptr);

// ---- The linearized iteration at a state --------------------------------------------------

// f linearized at (x, x0) for one example ([1, L, d]): products with df/dx and df/dx0 without
// forming either. J v = d/du <J^T u, v>: one backward pass builds J^T u as a function of u,
// a second differentiates it along v.
class Linearization {
 public:
  Linearization(LoopedTransformerImpl& model, const torch::Tensor& x, const torch::Tensor& x0);
  torch::Tensor state_jvp(const torch::Tensor& v);  // (df/dx) v
  torch::Tensor input_jvp(const torch::Tensor& v);  // (df/dx0) v; zero when f ignores x0
  int64_t dim() const { return x_.numel(); }
  const torch::Tensor& value() const { return y_; }  // f(x, x0)

 private:
  torch::Tensor x_, x0_, y_, u_, state_vjp_, input_vjp_;
};

using LinearOperator = std::function<torch::Tensor(const torch::Tensor&)>;

// The largest-modulus eigenvalue of an operator by Arnoldi iteration (handles complex leading
// pairs, which power iteration does not). Converged when the leading Ritz pair's residual
// ||A y - lambda y|| falls below tolerance * |lambda|, or the Krylov space became invariant.
struct SpectralRadius {
  double radius = 0;
  std::complex<double> eigenvalue;
  double residual = 0;  // relative residual of the leading Ritz pair
  int64_t steps = 0;    // Krylov dimension used
  bool converged = false;
};
SpectralRadius spectral_radius(const LinearOperator& op, const torch::Tensor& like, int64_t max_steps = 60,
                               double tolerance = 1e-6, uint64_t seed = 0);

// Solves (I - A) w = b by GMRES (no restart); `residual` is ||b - (I - A) w|| / ||b||.
struct LinearSolve {
  torch::Tensor solution;
  double residual = 0;
  int64_t steps = 0;
};
LinearSolve solve_identity_minus(const LinearOperator& op, const torch::Tensor& b, int64_t max_steps = 100,
                                 double tolerance = 1e-10);

// ---- Input dependence (proposition 5) -----------------------------------------------------

// dx*/dx0 v at a reached state x* two ways: the implicit-function formula
// (I - df/dx)^{-1} (df/dx0) v, and central finite differences of the unrolled iteration
// (`iterations` iterations from the perturbed input, which is also the starting state).
struct Sensitivity {
  torch::Tensor implicit, finite_difference;
  double implicit_norm = 0, finite_difference_norm = 0;
  // ||implicit - fd|| / max(||implicit||, ||fd||); 0 when both are below 1e-9 (no dependence,
  // e.g. an autonomous model at an attracting fixed point).
  double relative_difference = 0;
  LinearSolve solve;
};
Sensitivity input_sensitivity(LoopedTransformerImpl& model, const torch::Tensor& x0, const torch::Tensor& reached,
                              const torch::Tensor& direction, int64_t iterations, double step = 1e-5);

// ---- Initialization independence (appendix A.8) -------------------------------------------

// The states reached after `iterations` from e = x0, e = 0 and e = Gaussian noise with x0's RMS,
// and the distances between them relative to the x0-started state, per example. `reached`, when
// given, is that x0-started state (run_from(loop, {}, iterations)), not recomputed.
struct InitIndependence {
  std::vector<double> x0_vs_zero, x0_vs_noise, zero_vs_noise;
};
InitIndependence init_independence(const Loop& loop, int64_t iterations, uint64_t seed,
                                   const torch::Tensor& reached = {});

// The recall matrix's spectral radius rho(Wx) per block (dense eigenvalues; appendix B.3-B.4).
// Empty for models without recall.
std::vector<double> recall_spectral_radius(LoopedTransformerImpl& model);

}  // namespace looplab::analysis
