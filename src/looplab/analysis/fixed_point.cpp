#include "looplab/analysis/fixed_point.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <deque>
#include <limits>

#include "looplab/model/engine/engine.h"
#include "looplab/util/error.h"
#include "looplab/model/relative_step.h"

namespace looplab::analysis {

const char* to_string(Behaviour b) {
  switch (b) {
    case Behaviour::kSettle: return "settle";
    case Behaviour::kCycle: return "cycle";
    case Behaviour::kDiverge: return "diverge";
    case Behaviour::kWander: return "wander";
  }
  return "?";
}

namespace {

// Per-example Euclidean norm of a batch [B, ...] as doubles on the CPU.
std::vector<double> norms(const torch::Tensor& x) {
  const torch::Tensor n = x.flatten(1).norm(2, 1).to(torch::kCPU, torch::kDouble).contiguous();
  return std::vector<double>(n.data_ptr<double>(), n.data_ptr<double>() + n.numel());
}

double flat_dot(const torch::Tensor& a, const torch::Tensor& b) { return (a * b).sum().item<double>(); }

// Orthogonalizes w against V[0..j] in place, adding the coefficients to column j of H:
// modified Gram-Schmidt, twice, since a non-normal Jacobian loses orthogonality fast otherwise.
void orthogonalize(const std::vector<torch::Tensor>& V, int64_t j, torch::Tensor& w,
                   std::vector<std::vector<double>>& H) {
  for (int pass = 0; pass < 2; ++pass)
    for (int64_t i = 0; i <= j; ++i) {
      const double h = flat_dot(V[i], w);
      H[i][j] += h;
      w = w - h * V[i];
    }
}

}  // namespace

torch::Tensor run_from(const Loop& loop, const torch::Tensor& start, int64_t iterations) {
  torch::NoGradGuard no_grad;
  return loop.run(iterations, nullptr, start);
}

std::vector<Convergence> convergence(const Loop& loop, const FixedPointOptions& s, torch::Tensor* reached,
                                     const StateObserver& observe) {
  if (s.max_iters < 1) throw Error("convergence: max_iters must be >= 1");
  // 0 (early exit's "never") would class every trajectory as wandering.
  if (!(s.tolerance > 0)) throw Error("convergence: the tolerance must be > 0");
  torch::NoGradGuard no_grad;
  const torch::Tensor& x0 = loop.x0();
  const int64_t B = x0.size(0);
  std::vector<Convergence> out(B);
  std::vector<bool> diverged(B, false);
  const std::vector<double> start_norm = norms(x0);
  std::deque<torch::Tensor> recent{x0};  // the last max_period + 1 states, newest at the back
  torch::Tensor x = x0;
  std::vector<double> size = start_norm;  // ||x_t||
  for (int64_t t = 1; t <= s.max_iters; ++t) {
    const torch::Tensor next = loop.step(x);
    const torch::Tensor moved = relative_step(next, x).to(torch::kCPU).contiguous();
    const double* step = moved.data_ptr<double>();
    const std::vector<double> next_size = norms(next);
    for (int64_t b = 0; b < B; ++b) {
      const double rel = step[b];
      if (!std::isfinite(next_size[b]) || next_size[b] > s.diverge_ratio * start_norm[b]) diverged[b] = true;
      if (out[b].first_below < 0 && rel < s.tolerance) out[b].first_below = t;
      if (t == s.max_iters) out[b].final_step = rel;
    }
    x = next;
    size = next_size;
    if (observe) observe(t, x);
    recent.push_back(x);
    if (static_cast<int64_t>(recent.size()) > s.max_period + 1) recent.pop_front();
  }
  const std::vector<double>& last_size = size;
  for (int64_t b = 0; b < B; ++b) {
    Convergence& c = out[b];
    if (diverged[b] || !std::isfinite(c.final_step)) {
      c.behaviour = Behaviour::kDiverge;
    } else if (c.final_step < s.tolerance) {
      c.behaviour = Behaviour::kSettle;
    }
  }
  // Cycles: x_T close to x_{T-p} for the smallest period 2 <= p <= max_period.
  const int64_t have = static_cast<int64_t>(recent.size()) - 1;
  for (int64_t period = 2; period <= std::min(s.max_period, have); ++period) {
    const std::vector<double> gap = norms(x - recent[recent.size() - 1 - period]);
    for (int64_t b = 0; b < B; ++b) {
      Convergence& c = out[b];
      if (c.behaviour == Behaviour::kWander && gap[b] < s.tolerance * last_size[b]) {
        c.behaviour = Behaviour::kCycle;
        c.period = period;
      }
    }
  }
  if (reached) *reached = x;
  return out;
}

// ---------------------------------------------------------------------------------------------

Linearization::Linearization(LoopedTransformerImpl& model, const torch::Tensor& x, const torch::Tensor& x0) {
  torch::AutoGradMode grad_on(true);
  // Its Jacobian-vector products differentiate the backward graph again: the plain blocks'
  // graph, since the fused block's backward is not itself differentiable (model/engine/engine.h).
  const PlainEngine plain;
  x_ = x.detach().clone().requires_grad_(true);
  x0_ = x0.detach().clone().requires_grad_(true);
  y_ = Loop::from_x0(model, x0_).step(x_);  // Wh x0 in the graph: df/dx0 flows through it
  u_ = torch::zeros_like(y_).requires_grad_(true);
  // J^T u and (df/dx0)^T u as differentiable functions of u.
  auto g = torch::autograd::grad({y_}, {x_, x0_}, {u_}, /*retain_graph=*/true, /*create_graph=*/true,
                                 /*allow_unused=*/true);
  state_vjp_ = g[0];
  input_vjp_ = g[1];
}

namespace {

torch::Tensor jvp_through(const torch::Tensor& vjp, const torch::Tensor& u, const torch::Tensor& v) {
  if (!vjp.defined() || !vjp.requires_grad()) return torch::zeros_like(u);
  torch::AutoGradMode grad_on(true);
  auto g = torch::autograd::grad({vjp}, {u}, {v.view_as(vjp)}, /*retain_graph=*/true, /*create_graph=*/false,
                                 /*allow_unused=*/true);
  return g[0].defined() ? g[0] : torch::zeros_like(u);
}

}  // namespace

torch::Tensor Linearization::state_jvp(const torch::Tensor& v) { return jvp_through(state_vjp_, u_, v); }
torch::Tensor Linearization::input_jvp(const torch::Tensor& v) { return jvp_through(input_vjp_, u_, v); }

// ---------------------------------------------------------------------------------------------

SpectralRadius spectral_radius(const LinearOperator& op, const torch::Tensor& like, int64_t max_steps,
                               double tolerance, uint64_t seed) {
  const int64_t n = like.numel();
  const int64_t m = std::min<int64_t>(max_steps, n);
  if (m < 1) throw Error("spectral_radius: empty operator");
  auto gen = at::detail::createCPUGenerator(seed);
  torch::Tensor v = torch::randn({n}, gen, torch::TensorOptions().dtype(torch::kDouble)).to(like.options());
  std::vector<torch::Tensor> V{v / v.norm()};
  std::vector<std::vector<double>> H(m + 1, std::vector<double>(m, 0.0));
  SpectralRadius best;
  for (int64_t j = 0; j < m; ++j) {
    torch::Tensor w = op(V[j].view_as(like)).reshape({n});
    orthogonalize(V, j, w, H);
    const double beta = w.norm().item<double>();
    H[j + 1][j] = beta;
    // Ritz values of the (j+1) x (j+1) Hessenberg matrix.
    const int64_t k = j + 1;
    torch::Tensor Hk = torch::zeros({k, k}, torch::kDouble);
    auto a = Hk.accessor<double, 2>();
    for (int64_t r = 0; r < k; ++r)
      for (int64_t c = 0; c < k; ++c) a[r][c] = H[r][c];
    auto [values, vectors] = torch::linalg_eig(Hk);
    const torch::Tensor mod = values.abs();
    const int64_t top = mod.argmax().item<int64_t>();
    const auto lambda = values[top].item<c10::complex<double>>();
    const double y_last = std::abs(vectors[k - 1][top].item<c10::complex<double>>());
    const double radius = std::abs(std::complex<double>(lambda.real(), lambda.imag()));
    best.radius = radius;
    best.eigenvalue = {lambda.real(), lambda.imag()};
    best.residual = beta * y_last / std::max(radius, 1e-300);
    best.steps = k;
    const bool invariant = beta <= 1e-12 * std::max(1.0, radius);
    if (invariant || best.residual < tolerance) {
      best.converged = true;
      if (invariant) best.residual = 0;
      return best;
    }
    if (k == n) break;
    V.push_back(w / beta);
  }
  return best;
}

LinearSolve solve_identity_minus(const LinearOperator& op, const torch::Tensor& b, int64_t max_steps,
                                 double tolerance) {
  const int64_t n = b.numel();
  const double beta = b.norm().item<double>();
  LinearSolve out;
  if (beta == 0) {
    out.solution = torch::zeros_like(b);
    return out;
  }
  const int64_t m = std::min<int64_t>(max_steps, n);
  std::vector<torch::Tensor> V{b.reshape({n}) / beta};
  std::vector<std::vector<double>> R(m + 1, std::vector<double>(m, 0.0));  // Hessenberg, rotated to triangular
  std::vector<double> cs(m), sn(m), g(m + 1, 0.0);
  g[0] = beta;
  int64_t k = 0;
  for (int64_t j = 0; j < m; ++j) {
    torch::Tensor w = V[j] - op(V[j].view_as(b)).reshape({n});  // (I - A) v_j
    orthogonalize(V, j, w, R);
    const double h_next = w.norm().item<double>();
    // Apply the earlier Givens rotations to the new column, then make one for h_next.
    for (int64_t i = 0; i < j; ++i) {
      const double t = cs[i] * R[i][j] + sn[i] * R[i + 1][j];
      R[i + 1][j] = -sn[i] * R[i][j] + cs[i] * R[i + 1][j];
      R[i][j] = t;
    }
    const double r = std::hypot(R[j][j], h_next);
    cs[j] = R[j][j] / r;
    sn[j] = h_next / r;
    R[j][j] = r;
    g[j + 1] = -sn[j] * g[j];
    g[j] = cs[j] * g[j];
    k = j + 1;
    out.residual = std::abs(g[j + 1]) / beta;
    if (out.residual < tolerance || h_next <= 1e-14 * beta) break;
    V.push_back(w / h_next);
  }
  // Back substitution R y = g, then w = V y.
  std::vector<double> y(k);
  for (int64_t i = k - 1; i >= 0; --i) {
    double s = g[i];
    for (int64_t c = i + 1; c < k; ++c) s -= R[i][c] * y[c];
    y[i] = s / R[i][i];
  }
  torch::Tensor x = torch::zeros({n}, b.options());
  for (int64_t i = 0; i < k; ++i) x = x + y[i] * V[i];
  out.solution = x.view_as(b);
  out.steps = k;
  // The true residual, not the recurrence's estimate.
  const torch::Tensor res = b.reshape({n}) - (x - op(out.solution).reshape({n}));
  out.residual = res.norm().item<double>() / beta;
  return out;
}

// ---------------------------------------------------------------------------------------------

Sensitivity input_sensitivity(LoopedTransformerImpl& model, const torch::Tensor& x0, const torch::Tensor& reached,
                              const torch::Tensor& direction, int64_t iterations, double step) {
  Sensitivity s;
  Linearization lin(model, reached, x0);
  const torch::Tensor b = lin.input_jvp(direction);
  s.solve = solve_identity_minus([&](const torch::Tensor& v) { return lin.state_jvp(v); }, b);
  s.implicit = s.solve.solution;
  const double h = step * x0.norm().item<double>() / direction.norm().item<double>();
  const torch::Tensor plus = x0 + h * direction, minus = x0 - h * direction;
  s.finite_difference =
      (run_from(Loop::from_x0(model, plus), {}, iterations) - run_from(Loop::from_x0(model, minus), {}, iterations)) /
      (2 * h);
  s.implicit_norm = s.implicit.norm().item<double>();
  s.finite_difference_norm = s.finite_difference.norm().item<double>();
  const double scale = std::max(s.implicit_norm, s.finite_difference_norm);
  s.relative_difference = scale < 1e-9 ? 0.0 : (s.implicit - s.finite_difference).norm().item<double>() / scale;
  return s;
}

InitIndependence init_independence(const Loop& loop, int64_t iterations, uint64_t seed, const torch::Tensor& reached) {
  const torch::Tensor& x0 = loop.x0();
  auto gen = at::detail::createCPUGenerator(seed);
  const torch::Tensor rms = x0.flatten(1).pow(2).mean(1).sqrt().view({-1, 1, 1});
  const torch::Tensor noise =
      torch::randn(x0.sizes(), gen, torch::TensorOptions().dtype(torch::kDouble)).to(x0.options()) * rms;
  const torch::Tensor from_x0 = reached.defined() ? reached : run_from(loop, {}, iterations);
  const torch::Tensor from_zero = run_from(loop, torch::zeros_like(x0), iterations);
  const torch::Tensor from_noise = run_from(loop, noise, iterations);
  const std::vector<double> size = norms(from_x0), a = norms(from_x0 - from_zero), b = norms(from_x0 - from_noise),
                            c = norms(from_zero - from_noise);
  InitIndependence out;
  for (size_t i = 0; i < size.size(); ++i) {
    const double s = std::max(size[i], 1e-300);
    out.x0_vs_zero.push_back(a[i] / s);
    out.x0_vs_noise.push_back(b[i] / s);
    out.zero_vs_noise.push_back(c[i] / s);
  }
  return out;
}

std::vector<double> recall_spectral_radius(LoopedTransformerImpl& model) {
  std::vector<double> out;
  for (const auto& block : *model.recur_blocks) {
    const auto& Wx = block->as<BlockImpl>()->Wx;
    if (!Wx) continue;
    const torch::Tensor w = Wx->weight.detach().to(torch::kCPU, torch::kDouble);
    out.push_back(torch::linalg_eigvals(w).abs().max().item<double>());
  }
  return out;
}

}  // namespace looplab::analysis
