#include "looplab/train/adamw.h"

#include <cmath>

#include "looplab/util/error.h"

namespace looplab {

bool weight_decayed(const std::string& name) {
  return name.find("bias") == std::string::npos && name.find("norm") == std::string::npos;
}

AdamW::AdamW(torch::OrderedDict<std::string, torch::Tensor> params, AdamWOptions options)
    : params_(std::move(params)), options_(options) {
  for (const auto& item : params_) {
    exp_avg_[item.key()] = torch::zeros_like(item.value());
    exp_avg_sq_[item.key()] = torch::zeros_like(item.value());
  }
}

void AdamW::zero_grad() {
  for (auto& item : params_)
    if (item.value().grad().defined()) item.value().mutable_grad() = torch::Tensor();
}

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define LOOPLAB_FUSED_ADAMW 1
#endif

void AdamW::step(double lr) {
  torch::NoGradGuard no_grad;
#ifdef LOOPLAB_FUSED_ADAMW
  if (options_.fused) return fused_step(lr);
#endif
  ++steps_;
  const double bias1 = 1.0 - std::pow(options_.beta1, static_cast<double>(steps_));
  const double bias2 = 1.0 - std::pow(options_.beta2, static_cast<double>(steps_));
  for (auto& item : params_) {
    torch::Tensor& p = item.value();
    if (!p.grad().defined()) continue;
    const torch::Tensor& g = p.grad();
    torch::Tensor& m = exp_avg_[item.key()];
    torch::Tensor& v = exp_avg_sq_[item.key()];
    if (weight_decayed(item.key())) p.mul_(1.0 - lr * options_.weight_decay);
    m.lerp_(g, 1.0 - options_.beta1);
    v.mul_(options_.beta2).addcmul_(g, g, 1.0 - options_.beta2);
    const torch::Tensor denom = (v.sqrt() / std::sqrt(bias2)).add_(options_.eps);
    p.addcdiv_(m, denom, -lr / bias1);
  }
}

void AdamW::fused_step(double lr) {
#ifdef LOOPLAB_FUSED_ADAMW
  ++steps_;
  if (step_tensors_.empty())
    for (const auto& item : params_)
      step_tensors_.push_back(torch::full({}, static_cast<double>(steps_ - 1), item.value().options().dtype(torch::kFloat32)));
  at::_foreach_add_(step_tensors_, 1.0);
  // Two groups, as the released code's: decayed and not; only parameters with a gradient.
  for (const bool decayed : {true, false}) {
    std::vector<torch::Tensor> p, g, m, v, steps;
    size_t i = 0;
    for (auto& item : params_) {
      const size_t index = i++;
      if (!item.value().grad().defined() || weight_decayed(item.key()) != decayed) continue;
      p.push_back(item.value());
      g.push_back(item.value().grad());
      m.push_back(exp_avg_[item.key()]);
      v.push_back(exp_avg_sq_[item.key()]);
      steps.push_back(step_tensors_[index]);
    }
    if (p.empty()) continue;
    at::_fused_adamw_(p, g, m, v, {}, steps, lr, options_.beta1, options_.beta2, decayed ? options_.weight_decay : 0.0,
                      options_.eps, /*amsgrad=*/false, /*maximize=*/false);
  }
#else
  (void)lr;
#endif
}

std::map<std::string, torch::Tensor> AdamW::state() const {
  std::map<std::string, torch::Tensor> out;
  for (const auto& [name, t] : exp_avg_) out[name + ".exp_avg"] = t;
  for (const auto& [name, t] : exp_avg_sq_) out[name + ".exp_avg_sq"] = t;
  out["step"] = torch::tensor(steps_, torch::kInt64);
  return out;
}

void AdamW::load_state(const std::map<std::string, torch::Tensor>& state, const std::string& source) {
  auto get = [&](const std::string& key, const torch::Tensor& like) {
    auto it = state.find(key);
    if (it == state.end()) throw Error(source + ": optimizer state '" + key + "' is missing");
    if (it->second.sizes() != like.sizes()) throw Error(source + ": optimizer state '" + key + "' has the wrong shape");
    return it->second.to(like.options());
  };
  torch::NoGradGuard no_grad;
  for (auto& [name, t] : exp_avg_) t.copy_(get(name + ".exp_avg", t));
  for (auto& [name, t] : exp_avg_sq_) t.copy_(get(name + ".exp_avg_sq", t));
  auto it = state.find("step");
  if (it == state.end()) throw Error(source + ": optimizer state 'step' is missing");
  steps_ = it->second.item<int64_t>();
  step_tensors_.clear();  // made again from steps_ at the next fused step
}

}  // namespace looplab
