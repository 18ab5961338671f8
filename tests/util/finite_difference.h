// The central difference the gradient tests check their analytic gradients against, written once.
#pragma once

#include <torch/torch.h>

#include <cstdint>

namespace looplab::testing {

// (f() with entry `index` of t's storage raised by h  -  f() with it lowered by h) / (2 h), the
// entry restored afterwards. t: a contiguous tensor (any floating dtype), changed in place
// without autograd; f: a callable returning the scalar as a double.
template <typename F>
double central_difference(const torch::Tensor& t, int64_t index, double h, F&& f) {
  torch::Tensor flat = t.view({-1});
  double keep = 0;
  {
    torch::NoGradGuard no_grad;
    keep = flat[index].item<double>();
    flat[index] = keep + h;
  }
  const double up = f();
  {
    torch::NoGradGuard no_grad;
    flat[index] = keep - h;
  }
  const double down = f();
  {
    torch::NoGradGuard no_grad;
    flat[index] = keep;
  }
  return (up - down) / (2 * h);
}

}  // namespace looplab::testing
