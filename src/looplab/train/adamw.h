// AdamW exactly as torch.optim.AdamW (decoupled weight decay, bias-corrected moments), with
// its state as named tensors. Written here rather than using torch::optim::AdamW because
// that class keys its state by tensor address in a way that changed between LibTorch
// versions, and resuming needs the state saved and restored by parameter name.
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

namespace looplab {

struct AdamWOptions {
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.01;
  // ATen's _fused_adamw_ (PyTorch 2.4 and later; ignored before): the same update as one
  // operator per weight-decay group instead of eight per parameter. Default off; `train` and
  // `bench step` turn it on for CUDA, where each operator is a kernel launch (issue 47). Equal to
  // the update below within float rounding (tests/train/adamw_test.cpp), not bit for bit.
  bool fused = false;
};

// The released code's weight-decay groups (SPEC section 2, `deepthinking/utils/tools.py`): a
// parameter whose name contains "bias" or "norm" (biases, GRU biases, q_norm, k_norm and the
// pre/peri/post norms' scales) gets no weight decay; every other one does, head.0.weight (the
// head's RMSNorm scale, whose name has no "norm") included.
bool weight_decayed(const std::string& name);

class AdamW {
 public:
  AdamW(torch::OrderedDict<std::string, torch::Tensor> params, AdamWOptions options);

  // One update of every parameter that has a gradient, at learning rate lr; weight decay only
  // on the parameters weight_decayed() names.
  void step(double lr);
  void zero_grad();

  // "<name>.exp_avg", "<name>.exp_avg_sq" per parameter, and "step" (int64 scalar).
  std::map<std::string, torch::Tensor> state() const;
  void load_state(const std::map<std::string, torch::Tensor>& state, const std::string& source);

 private:
  torch::OrderedDict<std::string, torch::Tensor> params_;
  AdamWOptions options_;
  int64_t steps_ = 0;
  std::map<std::string, torch::Tensor> exp_avg_, exp_avg_sq_;
  // fused: every parameter's step count as the float32 scalar _fused_adamw_ reads, kept equal to
  // steps_ (one _foreach_add_ per step).
  std::vector<torch::Tensor> step_tensors_;
  void fused_step(double lr);
};

}  // namespace looplab
