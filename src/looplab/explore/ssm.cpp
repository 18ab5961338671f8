// Illustrations 4-6: an SSM's recurrence against its convolution kernel, the HiPPO-LegS
// polynomial memory of a sine, and zero-order hold against Euler.
#include <algorithm>
#include <cmath>

#include "looplab/explore/common.h"

namespace looplab::explore {

using namespace detail;

// 4. h_t = A h_{t-1} + B u_t, y_t = C h_t; A = diag(a, 0.3), B = (1, 0.5), C = (1, -1).
namespace {
struct Dual {
  std::vector<double> kernel, recurrence, history, start_term, corrected;
};

Dual ssm_dual_run(double a, bool nonzero_start, const std::vector<double>& u) {
  const Mat A = diag({a, 0.3});
  const std::vector<double> B = {1, 0.5}, C = {1, -1};
  const std::vector<double> h_start = nonzero_start ? std::vector<double>{1, 0.5} : std::vector<double>{0, 0};
  const size_t n = u.size();
  Dual d;
  Mat power = identity(2);  // A^l
  for (size_t l = 0; l <= n; ++l) {
    d.kernel.push_back(dot(C, matvec(power, B)));
    d.start_term.push_back(dot(C, matvec(matmul(power, A), h_start)));  // C A^(l+1) h_{-1}
    power = matmul(power, A);
  }
  d.start_term.resize(n);
  d.kernel.resize(n);
  std::vector<double> h = h_start;
  for (size_t t = 0; t < n; ++t) {
    h = matvec(A, h);
    for (size_t k = 0; k < 2; ++k) h[k] += B[k] * u[t];
    d.recurrence.push_back(dot(C, h));
    double sum = 0;
    for (size_t s = 0; s <= t; ++s) sum += d.kernel[t - s] * u[s];
    d.history.push_back(sum);
    d.corrected.push_back(sum + d.start_term[t]);
  }
  return d;
}
}  // namespace

nlohmann::json ssm_dual(const Settings& s) {
  const Args args("ssm-dual", {range("a", "First state multiplier", 0.3, 0.95, 0.8), choice("start", "Starting memory", {"zero", "nonzero"}, "zero")}, s);
  const double a = args.num("a");
  const bool nonzero = args.str("start") == "nonzero";
  const std::vector<double> u = {1, 0, 2, -1, 0, 1};
  const Dual d = ssm_dual_run(a, nonzero, u);
  json j = base(4, "ssm-dual", "The same memory, two descriptions", "Chapter 7, 7.3.4 Dual Computation Modes",
                "Does stepping the memory forward give the same output as a weighted sum of past inputs, and when not?", args);
  double gap = 0, gap_corrected = 0;
  for (size_t t = 0; t < u.size(); ++t) {
    gap = std::max(gap, std::abs(d.recurrence[t] - d.history[t]));
    gap_corrected = std::max(gap_corrected, std::abs(d.recurrence[t] - d.corrected[t]));
  }
  j["readouts"] = {readout("K0", "Kernel weight at lag 0 (K0)", d.kernel[0]), readout("K1", "Kernel weight at lag 1 (K1)", d.kernel[1]),
                   readout("y2", "Output at step 2 (recurrence)", d.recurrence[2], 2),
                   readout("gap", "Largest gap, recurrence vs history sum", gap < 1e-12 ? 0.0 : gap),
                   readout("gap_corrected", "Largest gap, recurrence vs corrected sum", gap_corrected < 1e-12 ? 0.0 : gap_corrected)};
  const std::vector<double> ts = linspace(0, 5, 6);
  j["plots"] = {plot("Inputs and the memory kernel", "time / lag", "value", {series("input u_t", ts, u), series("kernel K_lag", ts, d.kernel)}),
                plot("Output three ways", "step t", "y_t",
                     {series("recurrence", ts, d.recurrence), series("history sum", ts, d.history),
                      series("history sum + start term", ts, d.corrected)})};
  if (!nonzero)
    j["summary"] = "With an empty start the two descriptions agree at every step (largest gap 0): the kernel sum is the recurrence "
                   "unrolled, and the start term is zero.";
  else
    j["summary"] = "With the start (1, 0.5) the input-only history sum misses the fading echo of the starting memory and is off by up "
                   "to " + fmt(gap) + "; adding C A^(t+1) h(-1) closes the gap exactly.";
  j["conclusion"] = "Step-by-step and kernel-sum computation agree exactly from an empty start; a nonzero start contributes one extra, fading term.";
  j["calculation"] = "A = diag(" + fmt(a) + ", 0.3), B = (1, 0.5), C = (1, -1), so K0 = C B = 1 - 0.5 = " + fmt(d.kernel[0]) + " and K1 = " +
                     fmt(a) + " - 0.15 = " + fmt(d.kernel[1]) + ". History sum at t = 2: K2 u0 + K1 u1 + K0 u2 = " + fmt(d.kernel[2] * u[0], 4) +
                     " + " + fmt(d.kernel[1] * u[1], 4) + " + " + fmt(d.kernel[0] * u[2], 4) + " = " + fmt(d.history[2], 4) +
                     ". Start term at t = 2: " + fmt(d.start_term[2], 4) + ". Recurrence: " + fmt(d.recurrence[2], 4) + ".";
  j["equations"] = {"h_t=\\bar A h_{t-1}+\\bar B u_t,\\quad y_t=Ch_t", "y_t=\\sum_{s=0}^{t}C\\bar A^{t-s}\\bar B u_s+C\\bar A^{t+1}h_{-1}"};
  j["symbols"] = {symbol("A-bar", "one step's carry-over of the state: diag(a, 0.3)"),
                  symbol("B-bar, C", "how the input is written, (1, 0.5), and how the state is read, (1, -1)"),
                  symbol("K", "the kernel: the weight an input gets as a function of its lag"),
                  symbol("h(-1)", "the state before the first input")};
  j["conditions"] = "Time-invariant matrices, no direct feedthrough, input u = (1, 0, 2, -1, 0, 1) from t = 0; the nonzero start is "
                    "h(-1) = (1, 0.5); both forms index time the same way.";
  const Dual pf = ssm_dual_run(a, true, u);
  double pf_gap = 0;
  for (size_t t = 0; t < u.size(); ++t) pf_gap = std::max(pf_gap, std::abs(pf.recurrence[t] - pf.history[t]));
  j["predict_first"] = {{"question", "If the memory does not start empty, can the input-only history sum still equal the recurrence?"},
                        {"answer", "No. With h(-1) = (1, 0.5) they differ by up to " + fmt(pf_gap) +
                                       " over the six steps; the start needs its own term."}};
  j["why_it_matters"] = "State-space language models train with the parallel kernel (convolution) form and generate with the recurrent "
                        "form, so the two have to agree, including the treatment of the starting state.";
  j["check"] = {{"question", "When the start is not empty, which term has to be added to the history sum at time t?"},
                {"answer", "C A-bar^(t+1) h(-1), the decaying echo of the starting state; the power is t + 1 because the update at t = 0 already "
                           "applies A-bar once. At t = 2 with the nonzero start it is " + fmt(pf.start_term[2], 4) + "."},
                {"values", {{"start_term_t2_nonzero", pf.start_term[2]}}}};
  return j;
}

// 5. HiPPO-LegS: the least-squares Legendre projection of sin(2 pi s) on [0, periods].
namespace {
struct Fit {
  std::vector<double> coefficients;
  double max_error = 0;
};

double window_signal(double s) { return std::sin(2 * M_PI * s); }

Fit legendre_fit(int m, double periods) {
  std::vector<double> x, w;
  gauss_legendre(200, x, w);
  Fit f;
  // c_n = (2n+1)/t int_0^t u(s) P_n(2s/t - 1) ds = (2n+1)/2 int_{-1}^{1} u(t(x+1)/2) P_n(x) dx.
  for (int n = 0; n < m; ++n) {
    double sum = 0;
    for (size_t k = 0; k < x.size(); ++k) sum += w[k] * window_signal(periods * (x[k] + 1) / 2) * legendre(n, x[k]);
    f.coefficients.push_back((2 * n + 1) / 2.0 * sum);
  }
  const int grid = 20001;
  for (int i = 0; i < grid; ++i) {
    const double xx = -1 + 2.0 * i / (grid - 1);
    double approx = 0;
    for (int n = 0; n < m; ++n) approx += f.coefficients[n] * legendre(n, xx);
    f.max_error = std::max(f.max_error, std::abs(approx - window_signal(periods * (xx + 1) / 2)));
  }
  return f;
}

// Zeros of sin(2 pi s) strictly inside (0, periods): s = k/2.
int interior_crossings(double periods) {
  int n = 0;
  for (int k = 1; k / 2.0 < periods; ++k) ++n;
  return n;
}
}  // namespace

nlohmann::json hippo(const Settings& s) {
  const Args args("hippo", {range("m", "State size", 2, 16, 8, true), choice("periods", "Window length (periods)", {"1", "3", "10"}, "1")}, s);
  const int m = static_cast<int>(args.num("m"));
  const double periods = args.num("periods");
  json j = base(5, "hippo", "A polynomial memory of everything so far", "Chapter 7, 7.15.1 HiPPO on a Sine Wave; 7.4.2 HiPPO-LegS",
                "Can a few numbers hold a whole stretch of a signal, and how long a stretch before they fail?", args);
  const Fit f = legendre_fit(m, periods);
  const double places = std::max(0.0, -std::log10(f.max_error));  // no correct places once the error passes 1
  const int crossings = interior_crossings(periods);
  j["readouts"] = {readout("max_error", "Largest error over the window", f.max_error),
                   readout("decimal_places", "Correct decimal places", places, 2),
                   readout("crossings", "Zero crossings the sine has in the window", crossings),
                   readout("max_polynomial_crossings", "Most a polynomial of degree m-1 can have", m - 1)};
  j["coefficients"] = f.coefficients;
  std::vector<double> sx = linspace(0, periods, 401), sine, recon, err;
  for (double sv : sx) {
    const double xx = 2 * sv / periods - 1;
    double approx = 0;
    for (int n = 0; n < m; ++n) approx += f.coefficients[n] * legendre(n, xx);
    sine.push_back(window_signal(sv));
    recon.push_back(approx);
    err.push_back(approx - window_signal(sv));
  }
  std::vector<double> ms = linspace(2, 16, 15), p1, p3, p10;
  for (double mm : ms) {
    p1.push_back(std::max(0.0, -std::log10(legendre_fit(static_cast<int>(mm), 1).max_error)));
    p3.push_back(std::max(0.0, -std::log10(legendre_fit(static_cast<int>(mm), 3).max_error)));
    p10.push_back(std::max(0.0, -std::log10(legendre_fit(static_cast<int>(mm), 10).max_error)));
  }
  j["plots"] = {plot("The sine and its polynomial reconstruction", "s (periods)", "value",
                     {series("sin(2 pi s)", sx, sine), series("reconstruction", sx, recon), series("error", sx, err)}),
                plot("Correct decimal places against state size", "m", "-log10(max error)",
                     {series("1 period", ms, p1), series("3 periods", ms, p3), series("10 periods", ms, p10)})};
  const bool room = crossings <= m - 1;
  j["summary"] = fmt(m) + " Legendre coefficients rebuild the sine with a largest error of " + fmt(f.max_error) + ". " +
                 (room ? "A degree " + fmt(m - 1) + " polynomial can cross zero " + fmt(m - 1) + " times, enough for the " + fmt(crossings) +
                             " crossing(s) in the window."
                       : "The window has " + fmt(crossings) + " zero crossings but a degree " + fmt(m - 1) + " polynomial allows at most " +
                             fmt(m - 1) + ", so the reconstruction cannot follow it.");
  j["conclusion"] = "A fixed-size polynomial memory is accurate while the window is smooth enough for its degree and fails once the signal wiggles more than the polynomial can.";
  const double r10 = std::pow(0.99, 10), r100 = std::pow(0.99, 100);
  j["calculation"] = "The state is the least-squares polynomial of degree " + fmt(m - 1) + ". Window: " + fmt(periods) +
                     " period(s), so sin(2 pi s) has " + fmt(crossings) + " interior zero crossing(s); a degree " + fmt(m - 1) +
                     " polynomial has at most " + fmt(m - 1) + ". Largest error " + fmt(f.max_error) + ". For comparison, an RNN with "
                     "|lambda| = 0.99 keeps 0.99^10 = " + fmt(r10) + " of an input 10 steps back and 0.99^100 = " + fmt(r100) + " of one 100 steps back.";
  j["rnn_comparison"] = {{"kept_10", r10}, {"kept_100", r100}};
  j["equations"] = {"c_n(t)=\\frac{2n+1}{t}\\int_0^t u(s)\\,P_n\\!\\left(\\tfrac{2s}{t}-1\\right)ds",
                    "u(s)\\approx\\sum_{n=0}^{m-1}c_n(t)\\,P_n\\!\\left(\\tfrac{2s}{t}-1\\right)"};
  j["symbols"] = {symbol("m", "state size: how many Legendre coefficients are kept"), symbol("c_n", "coefficient n, one entry of the state"),
                  symbol("P_n", "Legendre polynomial of degree n"), symbol("window", "the remembered interval [0, t], in sine periods")};
  j["conditions"] = "Signal sin(2 pi s) over 1, 3 or 10 periods; the memory is the mean-square-best polynomial of degree m-1 in "
                    "unnormalized Legendre polynomials (same curve as the book's scaling), coefficients by 200-point Gauss-Legendre "
                    "quadrature; error is the maximum over 20001 evenly spaced points. The HiPPO ODE itself is not integrated.";
  const Fit pf = legendre_fit(8, 10);
  j["predict_first"] = {{"question", "Eight numbers rebuild one period of the sine to better than 0.001. Does the same eight-number "
                                     "memory still work over ten periods?"},
                        {"answer", "No. Ten periods have " + fmt(interior_crossings(10)) + " zero crossings, a degree 7 polynomial at most 7; "
                                   "the largest error is " + fmt(pf.max_error) + "."}};
  j["why_it_matters"] = "HiPPO lets state-space layers keep a fixed-size summary of a long history; this limit is why the state has to "
                        "grow with the amount of detail to be remembered.";
  const int need = 7 + 1;
  j["check"] = {{"question", "A signal crosses zero 7 times in the window. What is the smallest state size m that could possibly follow it?"},
                {"answer", "A polynomial of degree m-1 has at most m-1 zeros, so m-1 >= 7, m >= " + fmt(need) +
                               ". This is only necessary: the shape must fit as well."},
                {"values", {{"m", need}}}};
  return j;
}

// 6. x' = -rate x + u, u = 1, x(0) = 0, stepped by zero-order hold and by Euler.
nlohmann::json discretization(const Settings& s) {
  const Args args("discretization", {range("delta", "Step size", 0.1, 3, 1.5), choice("rate", "Decay rate", {"1", "2"}, "1")}, s);
  const double delta = args.num("delta"), rate = args.num("rate"), z = rate * delta;
  json j = base(6, "discretization", "Turning a continuous memory into steps", "Chapter 7, 7.3.3 Discretization",
                "Sampling a continuous memory in steps: why is the exact zero-order hold safer than Euler's rule?", args);
  const Mat A = {{-rate}}, B = {{1.0}};
  const Mat Ad = expm(scale(A, delta));
  Mat Adm = Ad;
  Adm[0][0] -= 1;
  const double zoh_a = Ad[0][0], zoh_b = matmul(matmul(inverse(A), Adm), B)[0][0];
  const double euler_a = 1 + A[0][0] * delta, euler_b = delta * B[0][0];
  auto exact = [&](double t) { return (1 - std::exp(-rate * t)) / rate; };
  std::vector<double> times, xz, xe;
  double hz = 0, he = 0, worst_e = 0, worst_z = 0;
  for (int k = 0; k * delta <= 6 + 1e-9; ++k) {
    const double t = k * delta;
    times.push_back(t);
    xz.push_back(hz);
    xe.push_back(he);
    worst_e = std::max(worst_e, std::abs(he - exact(t)));
    worst_z = std::max(worst_z, std::abs(hz - exact(t)));
    hz = zoh_a * hz + zoh_b;
    he = euler_a * he + euler_b;
  }
  const std::string verdict = std::abs(euler_a) < 1 ? "stable" : std::abs(euler_a) == 1 ? "marginal (no decay)" : "unstable";
  j["readouts"] = {readout("zoh_multiplier", "ZOH multiplier e^(-z)", zoh_a), readout("euler_multiplier", "Euler multiplier 1 - z", euler_a),
                   readout("euler_worst_error", "Euler worst error at the steps", worst_e),
                   readout_text("euler_verdict", "Euler verdict", verdict),
                   readout("zoh_worst_error", "ZOH worst error at the steps", worst_z < 1e-12 ? 0.0 : worst_z)};
  const std::vector<double> tt = linspace(0, 6, 121);
  std::vector<double> curve;
  for (double t : tt) curve.push_back(exact(t));
  const std::vector<double> zs = linspace(0, 4, 81);
  std::vector<double> mz, me;
  for (double zz : zs) {
    mz.push_back(std::abs(expm({{-zz}})[0][0]));
    me.push_back(std::abs(1 - zz));
  }
  j["plots"] = {plot("Exact state and the two step rules", "time", "x",
                     {series("exact", tt, curve), series("ZOH steps", times, xz), series("Euler steps", times, xe)}),
                plot("Size of the one-step multiplier", "z = rate x step", "|multiplier|",
                     {series("ZOH |e^(-z)|", zs, mz), series("Euler |1 - z|", zs, me)})};
  j["summary"] = "The ZOH samples lie on the exact curve at any step size. Euler multiplies by " + fmt(euler_a) + " per step: " + verdict +
                 " here, and off the curve by up to " + fmt(worst_e) + ".";
  j["conclusion"] = "Zero-order hold keeps a decaying memory decaying for every step size; Euler becomes unstable once step x rate exceeds 2.";
  j["calculation"] = "Model x' = -" + fmt(rate) + " x + u. z = " + fmt(rate) + " x " + fmt(delta) + " = " + fmt(z) + ". ZOH: A-bar = e^(-z) = " +
                     fmt(zoh_a) + ", B-bar = (1 - e^(-z)) / " + fmt(rate) + " = " + fmt(zoh_b) + ". Euler: A-bar = 1 - z = " + fmt(euler_a) +
                     ", B-bar = " + fmt(euler_b) + ". Steady state 1/" + fmt(rate) + " = " + fmt(1 / rate) + " for both when stable.";
  j["values"] = {{"z", z}, {"zoh_b", zoh_b}, {"euler_b", euler_b}, {"steady_state", 1 / rate}};
  j["equations"] = {"\\bar A=e^{A\\Delta},\\quad \\bar B=A^{-1}(e^{A\\Delta}-I)B", "\\bar A_{\\text{Euler}}=1+A\\Delta,\\quad \\bar B_{\\text{Euler}}=\\Delta B"};
  j["symbols"] = {symbol("A", "continuous-time decay, A = -rate"), symbol("Delta", "step size, the time between samples"),
                  symbol("z", "step x rate, the single number that decides stability"),
                  symbol("A-bar, B-bar", "the per-step multiplier and input weight")};
  j["conditions"] = "Scalar x' = -rate x + u, constant input 1, x(0) = 0, followed to time 6; zero-order hold is exact because the "
                    "input is constant between samples. Rates 1 and 2.";
  j["predict_first"] = {{"question", "Euler multiplies the state by 1 - z each step. What happens once the step exceeds 2 / rate?"},
                        {"answer", "Then 1 - z < -1: the state flips sign and grows every step (at z = 2.5 the multiplier is " + fmt(1 - 2.5) +
                                       "), although the true memory decays."}};
  j["why_it_matters"] = "State-space language models learn the step size Delta; the exponential form keeps the memory stable and "
                        "decaying however large Delta becomes.";
  const double check_rate = 4, limit = 2 / check_rate;
  j["check"] = {{"question", "With decay rate 4, what is the largest step Euler can take and stay stable, and does ZOH have such a limit?"},
                {"answer", "Euler needs |1 - 4 Delta| < 1, i.e. Delta < " + fmt(limit) + ". ZOH multiplies by e^(-4 Delta), which lies "
                           "between 0 and 1 for every Delta, so it has no limit."},
                {"values", {{"euler_max_step", limit}}}};
  return j;
}

}  // namespace looplab::explore
