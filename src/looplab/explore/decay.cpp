// Illustrations 1-3: a decaying scalar memory, products of Jacobians against the norm bound,
// and the LSTM cell under prescribed gates.
#include <cmath>

#include "looplab/explore/common.h"

namespace looplab::explore {

using namespace detail;

// 1. h_t = a h_{t-1} + u_t from h_{-1} = 0.
namespace {
// The state after each step of the recurrence under the given inputs.
std::vector<double> run_scalar(double a, const std::vector<double>& u) {
  std::vector<double> h;
  double state = 0;
  for (double x : u) h.push_back(state = a * state + x);
  return h;
}
}  // namespace

nlohmann::json memory_decay(const Settings& s) {
  const Args args("memory-decay", {range("a", "Fraction kept each step", -1, 1.2, 0.8)}, s);
  const double a = args.num("a");
  json j = base(1, "memory-decay", "A memory that decays", "Chapter 7, 7.9.1 Stability and BIBO Analysis",
                "How much of an input from long ago is left in the state, and what does a never-ending input do to it?",
                args);
  // Weight of an input from lag L: the response to a single 1 at time 0, read L steps later.
  std::vector<double> impulse(31, 0.0);
  impulse[0] = 1;
  const std::vector<double> weights = run_scalar(a, impulse);
  const std::vector<double> ones = run_scalar(a, std::vector<double>(31, 1.0));
  const double w3 = weights[3], h3 = ones[3];
  const bool fades = std::abs(a) < 1;
  const double to_1e = (fades && a != 0) ? -1 / std::log(std::abs(a)) : NAN;
  const std::string verdict = fades ? "fades" : std::abs(a) == 1 ? "does not fade" : "grows";
  j["readouts"] = {readout("weight_lag3", "Weight of an input 3 steps back", w3),
                   readout("state_after_3", "State after 3 steps of constant input", h3),
                   readout_text("memory", "Memory", verdict),
                   readout("steps_to_1e", "Steps for the weight to fall to 1/e", to_1e)};
  const std::vector<double> lags = linspace(0, 30, 31);
  std::vector<double> reference(31);
  for (int t = 0; t <= 30; ++t) reference[t] = t + 1;  // the a = 1 state: every input kept in full
  j["plots"] = {plot("Weight of an old input", "lag", "weight a^lag", {series("weight", lags, weights)}),
                plot("State under a constant input of ones", "step t", "h_t",
                     {series("state", lags, ones), series("reference t+1 (a = 1)", lags, reference)})};
  std::string summary = "Every step scales what is stored by " + fmt(a) + ". ";
  if (fades)
    summary += "The weight of an old input shrinks geometrically (with a sign flip each step when a < 0), the weights sum to a "
               "finite total, and a stream of ones levels off at 1/(1 - a) = " + fmt(1 / (1 - a)) + ".";
  else if (a == 1)
    summary += "Nothing is forgotten, so a stream of ones adds up without limit: after t steps the state is t + 1.";
  else if (a == -1)
    summary += "The size of an old input never shrinks, only its sign flips; a stream of ones makes the state swing between 1 and 0.";
  else
    summary += "Old inputs are amplified at every step, so the state runs away.";
  j["summary"] = summary;
  j["conclusion"] = "Only when old inputs fade (|a| < 1) does the state stay bounded for every bounded input; at a = 1 a constant input grows the state without limit.";
  j["calculation"] = "Recurrence h_t = a h_(t-1) + u_t with h = 0 before the first input. An input from lag L is multiplied by a L times: "
                     "a^3 = " + fmt(a) + "^3 = " + fmt(w3) + ". Constant input 1: h_3 = 1 + a + a^2 + a^3 = " + fmt(h3) + ".";
  j["equations"] = {"h_t=ah_{t-1}+u_t,\\quad h_{-1}=0", "\\text{Weight of an input from lag }\\ell=a^\\ell"};
  j["symbols"] = {symbol("a", "share of the previous state carried into the next step"),
                  symbol("h", "the state, i.e. the memory"), symbol("u", "the input arriving at each step"),
                  symbol("lag", "number of steps since an input arrived")};
  j["conditions"] = "A scalar, time-invariant linear recurrence, zero initial state, input weight 1. Bounded-input bounded-state "
                    "stability needs |a| < 1; the 1/e time -1/ln|a| exists only for 0 < |a| < 1.";
  const std::vector<double> at_one = run_scalar(1.0, std::vector<double>(31, 1.0));
  j["predict_first"] = {{"question", "At a = 1 a single input is kept forever. Is the state then bounded when every input is 1?"},
                        {"answer", "No. Nothing decays, so each 1 adds on: the state after 30 steps is " + fmt(at_one[30]) +
                                       " and keeps growing. Remembering perfectly is the edge of instability."}};
  j["why_it_matters"] = "Recurrent networks and state-space layers apply one such update per token over very long inputs; whether "
                        "their state stays bounded hinges on the size of the multiplier.";
  std::vector<double> single(4, 0.0);
  single[0] = 2;
  const double answer = run_scalar(-0.5, single)[3];
  j["check"] = {{"question", "With a = -0.5 and a single input 2 at time 0, what is the state three steps later, and does the memory fade?"},
                {"answer", "2 x (-0.5)^3 = " + fmt(answer) + ". Each step halves the size and flips the sign, so it fades; the "
                           "weights are signed, so this is not an ordinary average."},
                {"values", {{"state_after_3", answer}}}};
  return j;
}

// 2. Products of 2x2 Jacobians: gain x diag(1, 0.1) and gain x diag(0.1, 1).
namespace {
struct ChainResult {
  std::vector<double> sizes;  // ||J_k ... J_1|| for k = 0..n
  std::vector<double> bounds; // prod ||J_j||
};

ChainResult chain(double gain, bool alternating, int n) {
  const Mat first = scale(diag({1, 0.1}), gain), second = scale(diag({0.1, 1}), gain);
  ChainResult r;
  Mat product = identity(2);
  double bound = 1;
  r.sizes.push_back(1);
  r.bounds.push_back(1);
  for (int k = 1; k <= n; ++k) {
    const Mat& j = (alternating && k % 2 == 0) ? second : first;
    product = matmul(j, product);  // later factors on the left
    bound *= spectral_norm2x2(j);
    r.sizes.push_back(spectral_norm2x2(product));
    r.bounds.push_back(bound);
  }
  return r;
}
}  // namespace

nlohmann::json jacobian_products(const Settings& s) {
  const Args args("jacobian-products",
                  {range("gain", "Size of each matrix", 0.6, 3, 1.2), choice("arrangement", "How matrices are arranged", {"aligned", "alternating"}, "aligned")},
                  s);
  const double gain = args.num("gain");
  const bool alternating = args.str("arrangement") == "alternating";
  json j = base(2, "jacobian-products", "Repeated multiplication",
                "Chapter 7, 7.1.2 Backpropagation Through Time; 7.1.3 The Vanishing Gradient Theorem",
                "If each step may stretch a signal by at most " + fmt(gain) + ", must the product of many steps blow up?", args);
  const ChainResult r = chain(gain, alternating, 10);
  const double size = r.sizes[10], bound = r.bounds[10];
  j["readouts"] = {readout("product_size", "Size of the product after 10 matrices", size),
                   readout("bound", "Bound from the individual sizes (gain^10)", bound),
                   readout("bound_over_actual", "Bound divided by the actual size", bound / size),
                   readout_text("grows", "Does the product grow?", size > 1 ? "yes, it grows" : size == 1 ? "no, it stays at 1" : "no, it shrinks")};
  const std::vector<double> ks = linspace(0, 10, 11);
  const std::vector<double> gains = linspace(0.6, 3, 49);
  std::vector<double> per_aligned, per_alternating;
  for (double g : gains) {
    per_aligned.push_back(std::pow(chain(g, false, 10).sizes[10], 0.1));
    per_alternating.push_back(std::pow(chain(g, true, 10).sizes[10], 0.1));
  }
  j["plots"] = {plot("Size of the product against length", "number of matrices k", "spectral norm",
                     {series("product", ks, r.sizes), series("bound gain^k", ks, r.bounds)}),
                plot("Average change per matrix against gain", "gain", "||product of 10||^(1/10)",
                     {series("aligned", gains, per_aligned), series("alternating", gains, per_alternating)})};
  if (!alternating)
    j["summary"] = "All ten matrices stretch the same axis, so the product is exactly as large as the bound: " + fmt(size) +
                   ". Here the bound is attained.";
  else
    j["summary"] = "The matrices take turns stretching different axes, so each pair only scales by gain^2 x 0.1 = " +
                   fmt(gain * gain * 0.1) + ". The product has size " + fmt(size) + " against a bound of " + fmt(bound) +
                   ", which overstates it " + fmt(bound / size) + " times.";
  j["conclusion"] = "Multiplying the sizes of the factors only bounds the product from above; factors that stretch different directions can make the actual product shrink.";
  if (!alternating)
    j["calculation"] = "Each matrix is " + fmt(gain) + " x diag(1, 0.1), of size " + fmt(gain) + ". Ten of them give " + fmt(gain) +
                       "^10 x diag(1, 0.1^10), whose largest entry is " + fmt(gain) + "^10 = " + fmt(size) + ". The bound is exact.";
  else
    j["calculation"] = "The matrices alternate " + fmt(gain) + " x diag(1, 0.1) and " + fmt(gain) + " x diag(0.1, 1). One pair is " +
                       fmt(gain) + "^2 x 0.1 x I = " + fmt(gain * gain * 0.1) + " I, five pairs give " + fmt(gain * gain * 0.1) + "^5 = " +
                       fmt(size) + ", while the bound is " + fmt(gain) + "^10 = " + fmt(bound) + ".";
  j["equations"] = {"\\frac{\\partial h_T}{\\partial h_t}=J_TJ_{T-1}\\cdots J_{t+1}",
                    "\\|J_T\\cdots J_{t+1}\\|\\leq\\prod_j\\|J_j\\|\\leq(\\lambda\\gamma)^{T-t}"};
  j["symbols"] = {symbol("J", "Jacobian of one step: how a small change of one state moves the next"),
                  symbol("gain", "the size (largest stretch) of each Jacobian"), symbol("k", "how many Jacobians are multiplied"),
                  symbol("norm", "spectral norm: the largest factor by which a matrix stretches any vector")};
  j["conditions"] = "Spectral norm; the prescribed matrices gain x diag(1, 0.1) and gain x diag(0.1, 1); ten factors, each new one "
                    "multiplied on the left; aligned uses the first matrix throughout, alternating switches every step.";
  const double pf_bound = std::pow(1.2, 10);
  const double pf_alt = chain(1.2, true, 10).sizes[10];
  j["predict_first"] = {{"question", "With every factor of size 1.2 the bound allows 1.2^10 = " + fmt(pf_bound) +
                                         ". Can the actual product still shrink?"},
                        {"answer", "Yes: alternating the stretched axis gives a product of size " + fmt(pf_alt) + "."}};
  j["why_it_matters"] = "Backpropagation through time multiplies one Jacobian per step, so whether gradients explode or vanish depends "
                        "on the actual product, not just on the size of each factor.";
  const double lined = chain(1.2, false, 10).sizes[10], alt = chain(1.2, true, 10).sizes[10];
  j["check"] = {{"question", "At gain 1.2, compare ten aligned matrices with ten alternating ones: which product is larger, and by what factor?"},
                {"answer", "Aligned: 1.2^10 = " + fmt(lined) + ". Alternating: " + fmt(1.2 * 1.2 * 0.1) + "^5 = " + fmt(alt, 3) +
                               ". Aligned is larger by a factor " + fmt(lined / alt) + " (0.1^-5), and the gap widens with every further pair."},
                {"values", {{"aligned", lined}, {"alternating", alt}, {"ratio", lined / alt}, {"pair_factor", 1.2 * 1.2 * 0.1}}}};
  return j;
}

// 3. The LSTM cell c_t = f c_{t-1} + (1 - f) candidate_t with candidates 0, 1, -1, 0.5.
nlohmann::json forget_gate(const Settings& s) {
  const Args args("forget-gate", {range("f", "Forget gate", 0, 1, 0.8), range("c0", "Starting cell value", -4, 4, 2)}, s);
  const double f = args.num("f"), c0 = args.num("c0"), i = 1 - f;
  const std::vector<double> candidates = {0, 1, -1, 0.5};
  json j = base(3, "forget-gate", "Select what to retain", "Chapter 7, 7.2.2 LSTM Architecture; 7.2.3 Gradient Highway",
                "How does the forget gate set how much of the old cell survives each update?", args);
  auto cells = [&](double gate, double start) {
    std::vector<double> c = {start};
    for (double cand : candidates) c.push_back(gate * c.back() + (1 - gate) * cand);
    return c;
  };
  const std::vector<double> c = cells(f, c0);
  auto direct = [](double gate, int k) {  // d c_k / d c_0 along the direct path: product of the gates
    double p = 1;
    for (int t = 0; t < k; ++t) p *= gate;
    return p;
  };
  const double kept4 = direct(f, 4), kept20 = direct(f, 20);
  j["readouts"] = {readout("input_gate", "Input gate (1 - f)", i), readout("cell_after_4", "Cell value after 4 updates", c[4]),
                   readout("kept_4", "Old cell kept after 4 updates (f^4)", kept4),
                   readout("kept_20", "Old cell kept after 20 updates (f^20)", kept20)};
  const std::vector<double> steps = linspace(0, 4, 5), long_steps = linspace(0, 20, 21);
  std::vector<double> surv, surv9, surv99;
  for (int k = 0; k <= 20; ++k) {
    surv.push_back(direct(f, k));
    surv9.push_back(direct(0.9, k));
    surv99.push_back(direct(0.99, k));
  }
  j["plots"] = {plot("Cell value over the updates", "update t", "c_t",
                     {series("cell", steps, c), series("candidate", linspace(1, 4, 4), candidates)}),
                plot("Share of the starting cell that survives", "updates k", "f^k",
                     {series("f = " + fmt(f), long_steps, surv), series("f = 0.9", long_steps, surv9), series("f = 0.99", long_steps, surv99)})};
  j["summary"] = "With forget gate " + fmt(f) + " every update keeps " + fmt(100 * f) + "% of the cell, so after 4 updates the start value " +
                 fmt(c0) + " is present with weight " + fmt(kept4, 2) + " (" + fmt(100 * kept4, 2) +
                 "%). The gate multiplies along the path, so only gates close to 1 carry a value far.";
  j["conclusion"] = "A forget gate near 1 carries a value across many updates; what survives is the product of the gates along the path.";
  j["calculation"] = "c1 = f c0 + i x " + fmt(candidates[0]) + " = " + fmt(f) + " x " + fmt(c0) + " + " + fmt(i) + " x 0 = " + fmt(c[1]) +
                     ". c2 = " + fmt(f) + " x " + fmt(c[1]) + " + " + fmt(i) + " x 1 = " + fmt(c[2]) +
                     ". The direct derivative of c4 with respect to c0 is f^4 = " + fmt(kept4, 2) + ".";
  j["equations"] = {"c_t=f_tc_{t-1}+i_t\\widetilde c_t", "\\text{Direct prescribed-gate derivative}=\\prod_{j=1}^{T}f_j"};
  j["symbols"] = {symbol("c", "the cell, the LSTM's stored value"), symbol("f", "forget gate: share of the old cell that is kept"),
                  symbol("i", "input gate: share of the candidate that is written (here 1 - f)"),
                  symbol("candidate", "the value offered at each update: 0, 1, -1, 0.5")};
  j["conditions"] = "Gates are fixed by hand, constant over time, with i = 1 - f; f = 0 and f = 1 are the idealized ends of a sigmoid. "
                    "The product covers the direct path only, not all dependencies of a trained LSTM.";
  const std::vector<double> frozen = cells(1.0, c0);
  j["predict_first"] = {{"question", "With the forget gate at 1 (input gate 0), does a candidate of -1 change the cell?"},
                        {"answer", "No. Nothing is written, so the cell stays at its start value: after the four updates it is " +
                                       fmt(frozen[4]) + "."}};
  j["why_it_matters"] = "The gated cell lets LSTMs carry information over long stretches of text: gates near 1 break the repeated "
                        "shrinking that makes plain recurrent gradients vanish.";
  const double ans = direct(0.9, 10);
  j["check"] = {{"question", "With f = 0.9, how much of the starting cell value remains after 10 updates along the direct path?"},
                {"answer", "0.9^10 = " + fmt(ans) + ", roughly " + fmt(100 * ans, 2) +
                               "%. A gate of 0.9 looks generous, yet about two thirds of the value is gone after ten steps."},
                {"values", {{"kept_10", ans}}}};
  return j;
}

}  // namespace looplab::explore
