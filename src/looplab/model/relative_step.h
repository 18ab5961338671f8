// The relative step ||x_{t+1} - x_t|| / ||x_t||: the one measure of how far an iteration still
// moves. Evaluation reports it, halting's fixed-point rule, early exit and the fixed-point
// analysis stop or class each example by it (per example), and the fixed-point gradients stop
// their forward and adjoint solves by it (over the whole batch: solve_until_still).
#pragma once

#include <torch/torch.h>

#include <cstdint>

namespace looplab {

// Per example: next, x [B, ...] -> [B] float64 on x's device. Each norm is taken in the state's
// dtype and the ratio in float64; a zero state divides by the smallest positive double.
torch::Tensor relative_step(const torch::Tensor& next, const torch::Tensor& x);
// The same from the step's norm ||next - x|| [B] float64, where the caller has it already.
torch::Tensor relative_step_of(const torch::Tensor& step_norm, const torch::Tensor& x);

// Over the whole batch as one vector, as a double (a zero state: over 1e-30).
double batch_relative_step(const torch::Tensor& next, const torch::Tensor& x);

// x <- step(x) from `x`, until the batch relative step falls below `batch_tolerance` or after
// `max_iters` steps: the forward solve to x* and the adjoint solve of the fixed-point gradients.
struct StillResult {
  torch::Tensor x;     // the last iterate
  int64_t iters = 0;   // steps taken
  bool still = false;  // whether the batch relative step fell below the tolerance
};
template <typename Step>
StillResult solve_until_still(torch::Tensor x, int64_t max_iters, double batch_tolerance, Step&& step) {
  StillResult r{std::move(x)};
  while (r.iters < max_iters) {
    torch::Tensor next = step(r.x);
    ++r.iters;
    const double moved = batch_relative_step(next, r.x);
    r.x = std::move(next);
    if (moved < batch_tolerance) {
      r.still = true;
      break;
    }
  }
  return r;
}

}  // namespace looplab
