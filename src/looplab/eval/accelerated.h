// Cheaper evaluation of a looped model: per-example early exit and Anderson acceleration of
// the fixed-point iteration x -> f(x, x0) (issue 8). Both count every block evaluation.
//
// Semantics (also in docs/performance.md):
//  - An example's "evaluations" are the applications of f to that example's state (one
//    iteration of the model = one evaluation; a model with B blocks runs B blocks per
//    evaluation). At most `max_iters` per example.
//  - Convergence test, per example, after every evaluation F = f(X) at the current point X:
//    relative step ||F - X|| / ||X|| < tolerance (norms over the whole example's state). For plain
//    iteration this is exactly the relative step ||x_{t+1} - x_t|| / ||x_t|| of `looplab eval`.
//    A converged example's answer is F, the state at its convergence (for plain iteration:
//    x_{t+1}, the state after its t+1-th iteration), and the example is removed from the
//    batch: no further evaluation is spent on it. tolerance = 0 never converges: every example gets
//    max_iters evaluations, and without Anderson the final state is exactly that of
//    `max_iters` plain iterations.
//  - Examples that do not converge end with the state after their max_iters-th evaluation
//    (plain: x_{max_iters}; Anderson: the last evaluated F).
//  - Anderson (memory m >= 1), type II, per example: with the last m' = min(m, history) points
//    X_i and values F_i = f(X_i), residuals G_i = F_i - X_i, solve
//    min ||sum_i a_i G_i||  subject to  sum_i a_i = 1  (Tikhonov term lambda * ||a||^2, Gram
//    matrix normalized by its largest diagonal entry), and move to X = sum_i a_i F_i.
//    Safeguard: a point produced by mixing whose residual ||G|| is larger than `growth` (2)
//    times the residual at the last accepted point is rejected; the example then takes the plain
//    step from the last accepted point (X = F_accepted, already computed, so no extra
//    evaluation) and its history restarts from that point. The rejected evaluation is counted.
#pragma once

#include <torch/torch.h>

#include <functional>

#include "looplab/data/splits.h"
#include "looplab/eval/fixed_point_options.h"
#include "looplab/model/looped_transformer.h"
#include "looplab/run/reports.h"

namespace looplab {

struct FixedPointResult {
  torch::Tensor state;        // [B, ...]: the answer state of every example (see semantics above)
  torch::Tensor evaluations;  // [B] int64 (CPU): evaluations of f spent on each example
  torch::Tensor converged;    // [B] bool (CPU)
  torch::Tensor relative_step;  // [B] double (CPU): ||F - X|| / ||X|| at the last evaluation
  int64_t total_evaluations = 0;  // sum of `evaluations`
  int64_t rejected = 0;           // Anderson: mixed points rejected by the safeguard
};

// f(x, index): x holds the current points [b, ...] of the examples `index` ([b] int64 indices
// into the batch, on x's device, increasing); returns f of each of them, same shape.
using BatchMap = std::function<torch::Tensor(const torch::Tensor& x, const torch::Tensor& index)>;

// Iterates f from x_init [B, ...] per the semantics above. Runs without gradient.
FixedPointResult solve_fixed_point(const BatchMap& f, const torch::Tensor& x_init, const FixedPointOptions& options);

// The model's map f(x, x0) on a batch of inputs [B, L, C_in], from x0.
FixedPointResult solve_model(LoopedTransformerImpl& model, const torch::Tensor& input, const FixedPointOptions& options);
FixedPointResult solve_loop(const Loop& loop, const FixedPointOptions& options);

// A split evaluated with early exit / Anderson, in batches (the split's entry of
// eval_accelerated.json).
AcceleratedSplitReport evaluate_accelerated(LoopedTransformerImpl& model, const Split& split, int64_t batch,
                                            const FixedPointOptions& options,
                                            const std::function<void(int64_t, int64_t)>& progress = nullptr);

}  // namespace looplab
