#include "looplab/analysis/model_report.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "looplab/eval/evaluate.h"
#include "looplab/util/error.h"

namespace looplab::analysis {

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double maximum(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

nlohmann::json spread(const std::vector<double>& v) {
  return {{"median", median(v)}, {"max", maximum(v)}};
}

}  // namespace

nlohmann::json analyze_split(LoopedTransformerImpl& model, LoopedTransformerImpl& detail_model, const Split& split,
                             const ReportSettings& s, const ReportProgress& progress) {
  if (s.batch < 1 || s.detail_count < 0) throw Error("analyze: batch must be >= 1 and the detail count >= 0");
  const int64_t n = split.size(), T = s.convergence.max_iters;
  const std::string& task = model.config().task;
  const Positions p = model.positions(model.grid_for(split.inputs.size(1)));

  // Pass 1, every example: convergence and accuracy after each iteration.
  std::vector<Convergence> conv;
  std::vector<double> exact(T, 0.0), per_position(T, 0.0);
  for (int64_t start = 0; start < n; start += s.batch) {
    const int64_t end = std::min(n, start + s.batch);
    torch::Tensor x0;
    {
      torch::NoGradGuard no_grad;
      x0 = model.embed(split.inputs.slice(0, start, end).to(model.device(), model.dtype()));
    }
    const torch::Tensor target = split.targets.slice(0, start, end).to(model.device());
    const auto batch = convergence(model, x0, p, s.convergence, nullptr, [&](int64_t t, const torch::Tensor& x) {
      const torch::Tensor right = predict(model.readout(x), task) == target;
      exact[t - 1] += right.all(1).sum().item<double>();
      per_position[t - 1] += right.to(torch::kDouble).mean(1).sum().item<double>();
    });
    conv.insert(conv.end(), batch.begin(), batch.end());
    if (progress) progress("convergence", end, n);
  }
  for (int64_t t = 0; t < T; ++t) {
    exact[t] /= static_cast<double>(n);
    per_position[t] /= static_cast<double>(n);
  }

  nlohmann::json examples = nlohmann::json::array();
  std::vector<double> first_below, final_step;
  int64_t counts[4] = {0, 0, 0, 0};
  for (int64_t i = 0; i < n; ++i) {
    const Convergence& c = conv[i];
    ++counts[static_cast<int>(c.behaviour)];
    if (c.first_below > 0) first_below.push_back(static_cast<double>(c.first_below));
    final_step.push_back(c.final_step);
    nlohmann::json e = {{"index", i},
                        {"behaviour", to_string(c.behaviour)},
                        {"first_below", c.first_below},
                        {"final_step", c.final_step}};
    if (c.behaviour == Behaviour::kCycle) e["period"] = c.period;
    examples.push_back(e);
  }
  auto fraction = [&](Behaviour b) { return static_cast<double>(counts[static_cast<int>(b)]) / static_cast<double>(n); };

  // Pass 2, the first detail_count examples in float64: the linearized iteration at the
  // reached state, proposition 5 both ways, and the three starts of appendix A.8.
  const int64_t m = std::min(n, s.detail_count);
  nlohmann::json detail = {{"count", m}};
  if (m > 0) {
    const Positions dp = detail_model.positions(detail_model.grid_for(split.inputs.size(1)));
    torch::Tensor x0;
    {
      torch::NoGradGuard no_grad;
      x0 = detail_model.embed(split.inputs.slice(0, 0, m).to(detail_model.device(), detail_model.dtype()));
    }
    const torch::Tensor reached = run_from(detail_model, x0, dp, x0, T);
    const InitIndependence ind = init_independence(detail_model, x0, dp, T, s.seed, reached);
    std::vector<double> radius, sens_diff, sens_norm, sens_fd_norm, sens_diff_stable;
    int64_t converged = 0, below_one = 0;
    auto gen = at::detail::createCPUGenerator(s.seed + 1);
    for (int64_t i = 0; i < m; ++i) {
      const torch::Tensor xi = x0.slice(0, i, i + 1), ri = reached.slice(0, i, i + 1);
      Linearization lin(detail_model, ri, xi, dp);
      const SpectralRadius r = spectral_radius([&](const torch::Tensor& v) { return lin.state_jvp(v); }, ri,
                                               s.arnoldi_steps, s.arnoldi_tolerance, s.seed + i);
      torch::Tensor v = torch::randn(xi.sizes(), gen, torch::TensorOptions().dtype(torch::kDouble)).to(xi.options());
      v = v / v.norm();
      const Sensitivity sens = input_sensitivity(detail_model, xi, dp, ri, v, T);
      radius.push_back(r.radius);
      converged += r.converged;
      below_one += r.radius < 1;
      sens_diff.push_back(sens.relative_difference);
      sens_norm.push_back(sens.implicit_norm);
      sens_fd_norm.push_back(sens.finite_difference_norm);
      if (r.radius < 1) sens_diff_stable.push_back(sens.relative_difference);
      nlohmann::json& e = examples[i];
      e["radius"] = r.radius;
      e["eigenvalue"] = {r.eigenvalue.real(), r.eigenvalue.imag()};
      e["radius_residual"] = r.residual;
      e["arnoldi_steps"] = r.steps;
      e["radius_converged"] = r.converged;
      e["sensitivity_norm"] = sens.implicit_norm;
      e["sensitivity_fd_norm"] = sens.finite_difference_norm;
      e["sensitivity_fd_difference"] = sens.relative_difference;
      e["gmres_residual"] = sens.solve.residual;
      e["gmres_steps"] = sens.solve.steps;
      e["init_distance"] = {{"x0_vs_zero", ind.x0_vs_zero[i]},
                            {"x0_vs_noise", ind.x0_vs_noise[i]},
                            {"zero_vs_noise", ind.zero_vs_noise[i]}};
      if (progress) progress("jacobian", i + 1, m);
    }
    detail["radius"] = {{"median", median(radius)},
                        {"max", maximum(radius)},
                        {"fraction_below_1", static_cast<double>(below_one) / static_cast<double>(m)},
                        {"fraction_converged", static_cast<double>(converged) / static_cast<double>(m)}};
    detail["sensitivity"] = {{"norm", spread(sens_norm)},
                             {"fd_norm", spread(sens_fd_norm)},
                             {"implicit_vs_fd", spread(sens_diff)},
                             {"implicit_vs_fd_where_radius_below_1", spread(sens_diff_stable)}};
    detail["init_distance"] = {{"x0_vs_zero", spread(ind.x0_vs_zero)},
                               {"x0_vs_noise", spread(ind.x0_vs_noise)},
                               {"zero_vs_noise", spread(ind.zero_vs_noise)}};
  }

  const int64_t Ttrain = std::min(s.training_iters, T);
  const auto best = std::max_element(exact.begin(), exact.end());
  std::vector<int64_t> iterations(T);
  for (int64_t t = 0; t < T; ++t) iterations[t] = t + 1;
  return {{"count", n},
          {"positions", split.inputs.size(1)},
          {"max_iters", T},
          {"tolerance", s.convergence.tolerance},
          {"convergence",
           {{"settle", fraction(Behaviour::kSettle)},
            {"cycle", fraction(Behaviour::kCycle)},
            {"diverge", fraction(Behaviour::kDiverge)},
            {"wander", fraction(Behaviour::kWander)},
            {"first_below", spread(first_below)},
            {"final_step", spread(final_step)}}},
          {"accuracy", {{"iterations", iterations}, {"exact", exact}, {"per_position", per_position}}},
          {"overthinking",
           {{"training_iters", Ttrain},
            {"exact_at_training_iters", Ttrain > 0 ? exact[Ttrain - 1] : 0.0},
            {"best_exact", *best},
            {"best_iteration", (best - exact.begin()) + 1},
            {"exact_at_max_iters", exact.back()}}},
          {"detail", detail},
          {"examples", examples}};
}

std::string report_text(const std::string& split, const nlohmann::json& r) {
  std::ostringstream out;
  char buf[512];
  const auto& c = r["convergence"];
  std::snprintf(buf, sizeof buf,
                "%s (%lld examples, %lld positions, %lld iterations, tolerance %.0e)\n"
                "  reachability: settle %.1f%%  cycle %.1f%%  diverge %.1f%%  wander %.1f%%; relative step below "
                "tolerance after %.0f iterations (median of those that get there), final step median %.2e max %.2e\n",
                split.c_str(), static_cast<long long>(r["count"].get<int64_t>()),
                static_cast<long long>(r["positions"].get<int64_t>()),
                static_cast<long long>(r["max_iters"].get<int64_t>()), r["tolerance"].get<double>(),
                100 * c["settle"].get<double>(), 100 * c["cycle"].get<double>(), 100 * c["diverge"].get<double>(),
                100 * c["wander"].get<double>(), c["first_below"]["median"].get<double>(),
                c["final_step"]["median"].get<double>(), c["final_step"]["max"].get<double>());
  out << buf;
  const auto& o = r["overthinking"];
  std::snprintf(buf, sizeof buf,
                "  accuracy: exact %.2f%% after T = %lld, best %.2f%% after %lld, %.2f%% after %lld\n",
                100 * o["exact_at_training_iters"].get<double>(),
                static_cast<long long>(o["training_iters"].get<int64_t>()), 100 * o["best_exact"].get<double>(),
                static_cast<long long>(o["best_iteration"].get<int64_t>()), 100 * o["exact_at_max_iters"].get<double>(),
                static_cast<long long>(r["max_iters"].get<int64_t>()));
  out << buf;
  const auto& d = r["detail"];
  if (d["count"].get<int64_t>() > 0) {
    std::snprintf(buf, sizeof buf,
                  "  first %lld examples, float64:\n"
                  "    spectral radius of df/dx at the reached state: median %.4f max %.4f, below 1 for %.0f%%, "
                  "Arnoldi converged for %.0f%%\n"
                  "    input sensitivity ||dx*/dx0 v|| (unit v): median %.3g implicit, %.3g finite differences; "
                  "median relative difference %.2e (%.2e where the radius is below 1)\n"
                  "    initialization independence, ||x*(e) - x*(e')|| / ||x*(x0)||: x0 vs 0 median %.2e max %.2e; "
                  "x0 vs noise median %.2e max %.2e\n",
                  static_cast<long long>(d["count"].get<int64_t>()), d["radius"]["median"].get<double>(),
                  d["radius"]["max"].get<double>(), 100 * d["radius"]["fraction_below_1"].get<double>(),
                  100 * d["radius"]["fraction_converged"].get<double>(),
                  d["sensitivity"]["norm"]["median"].get<double>(), d["sensitivity"]["fd_norm"]["median"].get<double>(),
                  d["sensitivity"]["implicit_vs_fd"]["median"].get<double>(),
                  d["sensitivity"]["implicit_vs_fd_where_radius_below_1"]["median"].get<double>(),
                  d["init_distance"]["x0_vs_zero"]["median"].get<double>(),
                  d["init_distance"]["x0_vs_zero"]["max"].get<double>(),
                  d["init_distance"]["x0_vs_noise"]["median"].get<double>(),
                  d["init_distance"]["x0_vs_noise"]["max"].get<double>());
    out << buf;
  }
  return out.str();
}

}  // namespace looplab::analysis
