#include "looplab/analysis/model_report.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <sstream>

#include "looplab/eval/evaluate.h"
#include "looplab/model/engine/engine.h"
#include "looplab/tasks/registry.h"
#include "looplab/util/error.h"
#include "looplab/util/numeric.h"

namespace looplab::analysis {

namespace {

double maximum(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

Spread spread(const std::vector<double>& v) { return {median(v), maximum(v)}; }

}  // namespace

AnalysisSplitReport analyze_split(LoopedTransformerImpl& model, LoopedTransformerImpl& detail_model, const Split& split,
                                  const AnalysisOptions& s, const ReportProgress& progress) {
  if (s.batch < 1 || s.detail_count < 0) throw Error("analyze: batch must be >= 1 and the detail count >= 0");
  const int64_t n = split.size(), T = s.convergence.max_iters;
  const Decoding decoding = task(model.config().task).spec().decoding;

  // Pass 1, every example: convergence and accuracy after each iteration, whether its answer
  // after the last is right and from which iteration that answer stood.
  std::vector<Convergence> conv;
  std::vector<bool> right_at_end;
  std::vector<int64_t> answer_from;
  std::vector<double> exact(T, 0.0), per_position(T, 0.0);
  for (int64_t start = 0; start < n; start += s.batch) {
    const int64_t end = std::min(n, start + s.batch);
    torch::NoGradGuard no_grad;
    const Loop loop(model, split.inputs.slice(0, start, end));
    const torch::Tensor target = split.targets.slice(0, start, end).to(model.device());
    // On the model's device: read back once per batch, not once per iteration.
    torch::Tensor previous, changed_at = torch::ones({end - start}, torch::TensorOptions(torch::kInt64).device(model.device())),
                            right_now;
    const auto batch = convergence(loop, s.convergence, nullptr, [&](int64_t t, const torch::Tensor& x) {
      const torch::Tensor answer = predict(loop.logits(x), decoding);
      const torch::Tensor right = answer == target;
      right_now = right.all(1);
      exact[t - 1] += right_now.sum().item<double>();
      per_position[t - 1] += right.to(torch::kDouble).mean(1).sum().item<double>();
      if (previous.defined()) changed_at.masked_fill_((answer != previous).any(1), t);
      previous = answer;
    });
    conv.insert(conv.end(), batch.begin(), batch.end());
    const torch::Tensor right_cpu = right_now.cpu(), changed_cpu = changed_at.cpu();
    for (int64_t i = 0; i < end - start; ++i) {
      right_at_end.push_back(right_cpu[i].item<bool>());
      answer_from.push_back(changed_cpu[i].item<int64_t>());
    }
    if (progress) progress("convergence", end, n);
  }
  for (int64_t t = 0; t < T; ++t) {
    exact[t] /= static_cast<double>(n);
    per_position[t] /= static_cast<double>(n);
  }

  AnalysisSplitReport report;
  std::vector<double> first_below, final_step;
  int64_t counts[4] = {0, 0, 0, 0}, right_counts[4] = {0, 0, 0, 0};
  for (int64_t i = 0; i < n; ++i) {
    const Convergence& c = conv[i];
    ++counts[static_cast<int>(c.behaviour)];
    right_counts[static_cast<int>(c.behaviour)] += right_at_end[i];
    if (c.first_below > 0) first_below.push_back(static_cast<double>(c.first_below));
    final_step.push_back(c.final_step);
    ExampleReport e;
    e.index = i;
    e.behaviour = to_string(c.behaviour);
    e.first_below = c.first_below;
    e.final_step = c.final_step;
    if (c.behaviour == Behaviour::kCycle) e.period = c.period;
    e.right = right_at_end[i];
    e.answer_from = answer_from[i];
    report.examples.push_back(e);
  }
  auto fraction = [&](Behaviour b) { return static_cast<double>(counts[static_cast<int>(b)]) / static_cast<double>(n); };

  // Pass 2, the first detail_count examples in float64: the linearized iteration at the
  // reached state, proposition 5 both ways, and the three starts of appendix A.8.
  const int64_t m = std::min(n, s.detail_count);
  report.detail.count = m;
  if (m > 0) {
    // The reference formulas throughout (the plain engine, attention by its formula): the
    // Jacobians differentiate twice, and every float64 figure of the pass comes from one engine.
    const PlainEngine plain;
    std::optional<Loop> detail_loop;
    {
      torch::NoGradGuard no_grad;
      detail_loop.emplace(detail_model, split.inputs.slice(0, 0, m));
    }
    const Loop& dl = *detail_loop;
    const torch::Tensor& x0 = dl.x0();
    const torch::Tensor reached = run_from(dl, {}, T);
    const InitIndependence ind = init_independence(dl, T, s.seed, reached);
    std::vector<double> radius, sens_diff, sens_norm, sens_fd_norm, sens_diff_stable;
    int64_t converged = 0, below_one = 0;
    auto gen = at::detail::createCPUGenerator(s.seed + 1);
    for (int64_t i = 0; i < m; ++i) {
      const torch::Tensor xi = x0.slice(0, i, i + 1), ri = reached.slice(0, i, i + 1);
      Linearization lin(detail_model, ri, xi);
      const SpectralRadius r = spectral_radius([&](const torch::Tensor& v) { return lin.state_jvp(v); }, ri,
                                               s.arnoldi_steps, s.arnoldi_tolerance, s.seed + i);
      torch::Tensor v = torch::randn(xi.sizes(), gen, torch::TensorOptions().dtype(torch::kDouble)).to(xi.options());
      v = v / v.norm();
      const Sensitivity sens = input_sensitivity(detail_model, xi, ri, v, T);
      radius.push_back(r.radius);
      converged += r.converged;
      below_one += r.radius < 1;
      sens_diff.push_back(sens.relative_difference);
      sens_norm.push_back(sens.implicit_norm);
      sens_fd_norm.push_back(sens.finite_difference_norm);
      if (r.radius < 1) sens_diff_stable.push_back(sens.relative_difference);
      ExampleReport::Detail d;
      d.radius = r.radius;
      d.eigenvalue_real = r.eigenvalue.real();
      d.eigenvalue_imag = r.eigenvalue.imag();
      d.radius_residual = r.residual;
      d.arnoldi_steps = r.steps;
      d.radius_converged = r.converged;
      d.sensitivity_norm = sens.implicit_norm;
      d.sensitivity_fd_norm = sens.finite_difference_norm;
      d.sensitivity_fd_difference = sens.relative_difference;
      d.gmres_residual = sens.solve.residual;
      d.gmres_steps = sens.solve.steps;
      d.x0_vs_zero = ind.x0_vs_zero[i];
      d.x0_vs_noise = ind.x0_vs_noise[i];
      d.zero_vs_noise = ind.zero_vs_noise[i];
      report.examples[i].detail = d;
      if (progress) progress("jacobian", i + 1, m);
    }
    auto& d = report.detail;
    d.radius_median = median(radius);
    d.radius_max = maximum(radius);
    d.fraction_below_1 = static_cast<double>(below_one) / static_cast<double>(m);
    d.fraction_converged = static_cast<double>(converged) / static_cast<double>(m);
    d.sensitivity_norm = spread(sens_norm);
    d.sensitivity_fd_norm = spread(sens_fd_norm);
    d.implicit_vs_fd = spread(sens_diff);
    d.implicit_vs_fd_where_radius_below_1 = spread(sens_diff_stable);
    d.x0_vs_zero = spread(ind.x0_vs_zero);
    d.x0_vs_noise = spread(ind.x0_vs_noise);
    d.zero_vs_noise = spread(ind.zero_vs_noise);
  }

  const int64_t Ttrain = std::min(s.training_iters, T);
  const auto best = std::max_element(exact.begin(), exact.end());
  report.count = n;
  report.positions = split.inputs.size(1);
  report.max_iters = T;
  report.tolerance = s.convergence.tolerance;
  report.convergence = {fraction(Behaviour::kSettle), fraction(Behaviour::kCycle), fraction(Behaviour::kDiverge),
                        fraction(Behaviour::kWander), spread(first_below), spread(final_step)};
  for (int64_t t = 0; t < T; ++t) report.accuracy.iterations.push_back(t + 1);
  report.accuracy.exact = exact;
  report.accuracy.per_position = per_position;
  report.right = AnalysisSplitReport::Right{right_counts[static_cast<int>(Behaviour::kSettle)],
                                            right_counts[static_cast<int>(Behaviour::kCycle)],
                                            right_counts[static_cast<int>(Behaviour::kDiverge)],
                                            right_counts[static_cast<int>(Behaviour::kWander)]};
  report.overthinking = {Ttrain, Ttrain > 0 ? exact[Ttrain - 1] : 0.0, *best, (best - exact.begin()) + 1, exact.back()};
  return report;
}

std::string report_text(const std::string& split, const AnalysisSplitReport& r) {
  std::ostringstream out;
  char buf[512];
  const auto& c = r.convergence;
  std::snprintf(buf, sizeof buf,
                "%s (%lld examples, %lld positions, %lld iterations, tolerance %.0e)\n"
                "  reachability: settle %.1f%%  cycle %.1f%%  diverge %.1f%%  wander %.1f%%; relative step below "
                "tolerance after %.0f iterations (median of those that get there), final step median %.2e max %.2e\n",
                split.c_str(), static_cast<long long>(r.count), static_cast<long long>(r.positions),
                static_cast<long long>(r.max_iters), r.tolerance, 100 * c.settle, 100 * c.cycle, 100 * c.diverge,
                100 * c.wander, c.first_below.median, c.final_step.median, c.final_step.max);
  out << buf;
  const auto& o = r.overthinking;
  std::snprintf(buf, sizeof buf, "  accuracy: exact %.2f%% after T = %lld, best %.2f%% after %lld, %.2f%% after %lld\n",
                100 * o.exact_at_training_iters, static_cast<long long>(o.training_iters), 100 * o.best_exact,
                static_cast<long long>(o.best_iteration), 100 * o.exact_at_max_iters, static_cast<long long>(r.max_iters));
  out << buf;
  if (r.right) {
    const auto& k = *r.right;
    std::snprintf(buf, sizeof buf,
                  "  right after %lld: %lld of %lld; their states: settled %lld, on a cycle %lld, diverged %lld, "
                  "wandering %lld\n",
                  static_cast<long long>(r.max_iters), static_cast<long long>(k.settle + k.cycle + k.diverge + k.wander),
                  static_cast<long long>(r.count), static_cast<long long>(k.settle), static_cast<long long>(k.cycle),
                  static_cast<long long>(k.diverge), static_cast<long long>(k.wander));
    out << buf;
  }
  const auto& d = r.detail;
  if (d.count > 0) {
    std::snprintf(buf, sizeof buf,
                  "  first %lld examples, float64:\n"
                  "    spectral radius of df/dx at the reached state: median %.4f max %.4f, below 1 for %.0f%%, "
                  "Arnoldi converged for %.0f%%\n"
                  "    input sensitivity ||dx*/dx0 v|| (unit v): median %.3g implicit, %.3g finite differences; "
                  "median relative difference %.2e (%.2e where the radius is below 1)\n"
                  "    initialization independence, ||x*(e) - x*(e')|| / ||x*(x0)||: x0 vs 0 median %.2e max %.2e; "
                  "x0 vs noise median %.2e max %.2e\n",
                  static_cast<long long>(d.count), d.radius_median, d.radius_max, 100 * d.fraction_below_1,
                  100 * d.fraction_converged, d.sensitivity_norm.median, d.sensitivity_fd_norm.median,
                  d.implicit_vs_fd.median, d.implicit_vs_fd_where_radius_below_1.median, d.x0_vs_zero.median,
                  d.x0_vs_zero.max, d.x0_vs_noise.median, d.x0_vs_noise.max);
    out << buf;
  }
  return out.str();
}

}  // namespace looplab::analysis
