#include "looplab/model/relative_step.h"

#include <limits>

namespace looplab {

torch::Tensor relative_step(const torch::Tensor& next, const torch::Tensor& x) {
  return relative_step_of((next - x).flatten(1).norm(2, 1).to(torch::kFloat64), x);  // [B]
}

torch::Tensor relative_step_of(const torch::Tensor& step_norm, const torch::Tensor& x) {
  const torch::Tensor size = x.flatten(1).norm(2, 1).to(torch::kFloat64);  // [B]
  return step_norm / size.clamp_min(std::numeric_limits<double>::min());
}

double batch_relative_step(const torch::Tensor& next, const torch::Tensor& x) {
  return ((next - x).norm() / x.norm().clamp_min(1e-30)).item<double>();
}

}  // namespace looplab
