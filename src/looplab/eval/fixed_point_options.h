// How a fixed-point iteration x -> f(x, x0) is run and judged: the one home of these options,
// shared by early exit and Anderson acceleration (eval/accelerated.h) and the fixed-point
// analysis (analysis/fixed_point.h). No LibTorch here.
#pragma once

#include <cstdint>

namespace looplab {

struct FixedPointOptions {
  int64_t max_iters = 500;  // evaluations of f per example, at most
  // An example has converged once its relative step ||x_{t+1} - x_t|| / ||x_t|| is below the
  // tolerance. Early exit: 0 never converges (run max_iters).
  double tolerance = 0;
  // Early exit only.
  int64_t anderson = 0;  // Anderson memory m; 0: plain iteration
  double lambda = 1e-4;  // Tikhonov regularization of the normalized least-squares problem
  double growth = 2.0;   // safeguard: reject a mixed point whose residual exceeds growth x the accepted one
  // Analysis only.
  int64_t max_period = 16;     // cycles up to this period are recognized
  double diverge_ratio = 1e6;  // ||x_t|| / ||x_0|| above this (or a non-finite state): divergence
};

}  // namespace looplab
