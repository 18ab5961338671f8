// Illustrations 7-8: a selective (input-dependent) timescale, and the LRU complex eigenvalue.
#include <algorithm>
#include <cmath>
#include <complex>

#include "looplab/explore/common.h"

namespace looplab::explore {

using namespace detail;

// 7. Scalar SSM, A = -1, B = 1, Delta_t = softplus(-3 + w flag_t), ZOH per token.
namespace {
constexpr int kTokens = 12, kKey = 3;

double softplus(double x) { return x > 30 ? x : std::log1p(std::exp(x)); }

struct Selective {
  std::vector<double> value, delta, keep, write, state, weight;  // weight: of each token in the final state
};

Selective run_selective(double w) {
  Selective r;
  const Mat A = {{-1.0}};
  double h = 0;
  for (int t = 0; t < kTokens; ++t) {
    const bool key = t == kKey;
    r.value.push_back(key ? 1.0 : (t % 2 == 0 ? 0.5 : -0.5));
    const double d = softplus(-3 + w * (key ? 1 : 0));
    const double keep = expm(scale(A, d))[0][0];  // e^(A Delta)
    const double write = (keep - 1) / A[0][0];    // A^-1 (e^(A Delta) - 1) B with B = 1
    r.delta.push_back(d);
    r.keep.push_back(keep);
    r.write.push_back(write);
    h = keep * h + write * r.value.back();
    r.state.push_back(h);
  }
  for (int s = 0; s < kTokens; ++s) {
    double wgt = r.write[s];
    for (int t = s + 1; t < kTokens; ++t) wgt *= r.keep[t];
    r.weight.push_back(wgt);
  }
  return r;
}
}  // namespace

nlohmann::json selective(const Settings& s) {
  const Args args("selective", {range("w", "Key-token boost", 0, 10, 4)}, s);
  const double w = args.num("w");
  json j = base(7, "selective", "Letting each token pick its own timescale", "Chapter 7, 7.5.2 Selective SSMs",
                "Can a memory take in one important token strongly and still pass over the filler around it?", args);
  const Selective r = run_selective(w), fixed = run_selective(0);
  const double key_left = r.weight[kKey] * r.value[kKey], fixed_left = fixed.weight[kKey] * fixed.value[kKey];
  double filler_total = 0;
  for (int t = 0; t < kTokens; ++t)
    if (t != kKey) filler_total += std::abs(r.weight[t] * r.value[t]);
  const int after = kTokens - 1 - kKey;
  double carried = 1;
  for (int t = kKey + 1; t < kTokens; ++t) carried *= r.keep[t];
  j["readouts"] = {readout("key_delta", "Timescale at the key token", r.delta[kKey]),
                   readout("filler_delta", "Timescale at filler tokens", r.delta[0]),
                   readout("key_left", "Key token left in the final state", key_left),
                   readout("key_over_filler", "Key weight / filler weight", key_left / filler_total),
                   readout("fixed_key_left", "Key token left with one fixed timescale (w = 0)", fixed_left)};
  j["values"] = {{"filler_keep", r.keep[0]}, {"filler_write", r.write[0]}, {"key_write", r.write[kKey]},
                 {"carried_after_key", carried}, {"filler_contribution_total", filler_total}};
  const std::vector<double> ts = linspace(0, kTokens - 1, kTokens);
  j["plots"] = {plot("Memory state over the tokens", "token t", "h_t", {series("selective", ts, r.state), series("fixed timescale", ts, fixed.state)}),
                plot("Timescale used for each token", "token t", "Delta_t", {series("Delta_t", ts, r.delta)})};
  j["summary"] = "The key token gets timescale " + fmt(r.delta[kKey]) + " and is written with strength " + fmt(r.write[kKey]) +
                 "; each filler gets " + fmt(r.delta[0]) + " and writes only a little. The key contributes " + fmt(key_left) +
                 " to the final state, against " + fmt(fixed_left) + " with a single fixed timescale.";
  j["conclusion"] = "A per-token timescale lets the memory write the key token hard and then skim over the filler, which no single fixed timescale achieves.";
  j["calculation"] = "Delta = softplus(-3 + w x flag). Filler: softplus(-3) = " + fmt(r.delta[0], 4) + ", so e^(-Delta) = " + fmt(r.keep[0], 4) +
                     " is kept and 1 - e^(-Delta) = " + fmt(r.write[0], 4) + " is written. Key with w = " + fmt(w) + ": Delta = " +
                     fmt(r.delta[kKey], 4) + ", write = " + fmt(r.write[kKey], 4) + ". " + std::to_string(after) +
                     " fillers follow the key, each keeping " + fmt(r.keep[0], 4) + ", so the key keeps " + fmt(r.write[kKey]) + " x " +
                     fmt(carried) + " = " + fmt(key_left) + ".";
  j["equations"] = {"\\Delta_t=\\operatorname{softplus}(s_\\Delta(x_t))", "\\bar A_t=e^{A\\Delta_t},\\quad \\bar B_t=A^{-1}(e^{A\\Delta_t}-1)B"};
  j["symbols"] = {symbol("Delta_t", "the timescale chosen from token t"), symbol("A", "the fixed decay, -1 here"),
                  symbol("w", "how much the key token raises its own timescale"),
                  symbol("e^(-Delta)", "share of the previous state kept at this step")};
  j["conditions"] = "Scalar state, A = -1, B = 1, 12 tokens; the key (value 1) sits at position 3 (counting from 0), the fillers are "
                    "+0.5 at even and -0.5 at odd positions. Delta = softplus(-3 + w x flag), flag = 1 only at the key; w = 0 is the "
                    "fixed-timescale baseline. Key weight / filler weight compares the key's share of the final state with the summed "
                    "size of all filler shares.";
  j["predict_first"] = {{"question", "Which timescale should the key token get, and which the fillers, if the key is to survive?"},
                        {"answer", "A large one for the key (write it strongly) and a small one for the fillers (keep the state, write "
                                   "little). With w = " + fmt(w) + " the key's Delta is " + fmt(r.delta[kKey]) + " against " + fmt(r.delta[0]) + "."}};
  j["why_it_matters"] = "This is the selection mechanism of Mamba-style models: each token decides how much of the state to overwrite, "
                        "so a fixed-size state can hold on to what matters in a long prompt.";
  const double tiny = 1e-3, keep_tiny = std::exp(-tiny), write_tiny = 1 - keep_tiny;
  j["check"] = {{"question", "If the model gives a filler token a timescale of almost zero, what happens to the state at that step?"},
                {"answer", "e^(-Delta) is close to 1, so the old state passes through almost unchanged, and the write 1 - e^(-Delta) is "
                           "close to 0, so the filler is skipped (at Delta = 0.001: keep " + fmt(keep_tiny, 4) + ", write " +
                           fmt(write_tiny, 3) + ")."},
                {"values", {{"keep", keep_tiny}, {"write", write_tiny}}}};
  return j;
}

// 8. LRU: lambda = r e^(i theta), r = e^(-nu), theta = 2 pi turns; h_k = lambda h_(k-1) + u.
nlohmann::json lru(const Settings& s) {
  const Args args("lru", {range("nu", "Decay strength", 0.001, 0.3, 0.01), choice("turns", "Turns per step", {"0", "0.05", "0.1", "0.25"}, "0")}, s);
  const double nu = args.num("nu"), turns = args.num("turns");
  json j = base(8, "lru", "A complex memory inside the unit circle",
                "Chapter 7, 7.11.2 LRU: Linear Recurrent Unit; 7.11.3 Input Normalization for Linear Recurrences",
                "What do the size and the angle of a complex multiplier do to a memory, and why does the angle matter for a constant input?",
                args);
  auto response = [](double nu_, double turns_) {
    const std::complex<double> lambda = std::polar(std::exp(-nu_), 2 * M_PI * turns_);
    return 1 / std::abs(1.0 - lambda);
  };
  const double r = std::exp(-nu), theta = 2 * M_PI * turns;
  const std::complex<double> lambda = std::polar(r, theta);
  const double dist2 = 1 - 2 * r * std::cos(theta) + r * r;
  const double steady = response(nu, turns);
  // Memory length: the number of steps k with r^k = 1/e.
  const double memory = -1 / std::log(r);
  j["readouts"] = {readout("r", "Memory left after one step (r = e^-nu)", r),
                   readout("memory_length", "Steps for memory to fall to 1/e", memory),
                   turns > 0 ? readout("steps_per_turn", "Steps per full turn", 1 / turns)
                             : readout_text("steps_per_turn", "Steps per full turn", "undefined (no rotation)"),
                   readout("steady_response", "Steady response to constant input", steady)};
  j["values"] = {{"theta", theta}, {"distance_squared", dist2}, {"lambda_re", lambda.real()}, {"lambda_im", lambda.imag()}};
  // Left plot: the impulse response lambda^k in the complex plane; plus the state under constant input.
  std::vector<double> re, im, hre, him;
  std::complex<double> p = 1, h = 0;
  const int steps = 400;
  for (int k = 0; k <= steps; ++k) {
    re.push_back(p.real());
    im.push_back(p.imag());
    h = lambda * h + 1.0;
    hre.push_back(h.real());
    him.push_back(h.imag());
    p *= lambda;
  }
  std::vector<double> circle_x, circle_y;
  for (double a : linspace(0, 2 * M_PI, 129)) {
    circle_x.push_back(std::cos(a));
    circle_y.push_back(std::sin(a));
  }
  std::vector<double> nus, s0, s05, s1, s25;
  for (double e : linspace(std::log10(0.001), std::log10(0.3), 61)) {
    const double n = std::pow(10, e);
    nus.push_back(n);
    s0.push_back(response(n, 0));
    s05.push_back(response(n, 0.05));
    s1.push_back(response(n, 0.1));
    s25.push_back(response(n, 0.25));
  }
  j["plots"] = {plot("Memory spiralling inside the unit circle", "real part", "imaginary part",
                     {series("lambda^k, k = 0..400", re, im), series("unit circle", circle_x, circle_y)}),
                plot("Steady response to a constant input against decay", "nu", "1/|1 - lambda|",
                     {series("0 turns", nus, s0), series("0.05 turns", nus, s05), series("0.1 turns", nus, s1), series("0.25 turns", nus, s25)})};
  j["state_under_constant_input"] = {{"re", hre}, {"im", him}};
  if (turns == 0)
    j["summary"] = "A real eigenvalue " + fmt(r) + " only fades along the real axis, and a constant input accumulates to " + fmt(steady) +
                   " times its size, the 1/(1 - r) growth. LRU's input normalization bounds the variance for random inputs, but for a "
                   "constant input it only slows this build-up.";
  else
    j["summary"] = "The eigenvalue " + fmt(r) + " turns by " + fmt(turns) + " of a circle each step, so the memory swings around while it fades; "
                   "successive constant inputs partly cancel and settle at only " + fmt(steady) + " times their size.";
  j["conclusion"] = "The size r sets how long a memory lasts and the angle sets how it oscillates; a real multiplier near 1 amplifies a constant input, a rotating one does not.";
  j["calculation"] = "lambda = r e^(i theta), r = e^(-" + fmt(nu) + ") = " + fmt(r) + ", theta = 2 pi x " + fmt(turns) + " = " + fmt(theta) +
                     " rad. Memory length 1/nu = " + fmt(1 / nu) + " steps. Response to a constant input of 1 is 1/|1 - lambda|, where "
                     "|1 - lambda|^2 = 1 - 2 r cos(theta) + r^2 = " + fmt(dist2, 4) + ", so it equals " + fmt(steady) + ".";
  j["equations"] = {"\\bar\\lambda=re^{i\\theta},\\quad r=e^{-\\nu},\\ \\theta\\in[0,\\pi]", "h_k\\to\\frac{\\bar b\\,u}{1-\\bar\\lambda}\\quad(k\\to\\infty)"};
  j["symbols"] = {symbol("r", "share of the memory left after one step (below 1)"),
                  symbol("nu", "decay strength: r = e^(-nu), memory length 1/nu steps"),
                  symbol("theta", "angle turned per step; a full turn is 2 pi"), symbol("lambda", "the complex multiplier r e^(i theta)")};
  j["conditions"] = "A single diagonal entry with input weight 1 and constant input 1; nu from 0.001 to 0.3, rotations 0, 0.05, 0.1 "
                    "and 0.25 turns per step. The steady response is the limit of the state, which exists because r < 1.";
  const double pf_real = 1 / (1 - 0.99), pf_rot = 1 / std::abs(1.0 - std::polar(0.99, 2 * M_PI * 0.1));
  j["predict_first"] = {{"question", "A real multiplier 0.99 turns a constant input 1 into a state of " + fmt(pf_real) +
                                         ". If a multiplier of the same size also turns by a tenth of a circle per step, does the state stay near 100?"},
                        {"answer", "No: it settles at 1/|1 - 0.99 e^(i 2 pi / 10)| = " + fmt(pf_rot) + "."}};
  j["why_it_matters"] = "The Linear Recurrent Unit keeps every eigenvalue inside the unit circle for stable training, and its normalization "
                        "bounds the variance for random inputs even near 1; for a steady input it only slows the growth.";
  const std::complex<double> lc = std::polar(std::exp(-0.01), 2 * M_PI * 0.1);
  const double dist = std::abs(1.0 - lc);
  j["check"] = {{"question", "An entry has decay nu = 0.01 and makes one turn every 10 steps. Is its response to a constant input near 100?"},
                {"answer", "No. |1 - lambda| = " + fmt(dist, 2) + ", so the response is about " + fmt(1 / dist, 2) +
                               ". Only a positive real entry of the same size gives about 100."},
                {"values", {{"distance", dist}, {"response", 1 / dist}}}};
  return j;
}

}  // namespace looplab::explore
