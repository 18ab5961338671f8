#include "looplab/train/weight_average.h"

#include "looplab/util/error.h"

namespace looplab {

WeightAverage::WeightAverage(LoopedTransformerImpl& model, double decay) : decay_(decay) {
  torch::NoGradGuard no_grad;
  for (const auto& item : model.named_parameters()) {
    names_.push_back(item.key());
    weights_.push_back(item.value());
    average_.push_back(item.value().detach().clone());
  }
}

void WeightAverage::update() {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < weights_.size(); ++i) average_[i].mul_(decay_).add_(weights_[i], 1 - decay_);
}

void WeightAverage::swap() {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < weights_.size(); ++i) {
    const torch::Tensor trained = weights_[i].detach().clone();
    weights_[i].copy_(average_[i]);
    average_[i].copy_(trained);
  }
}

std::map<std::string, torch::Tensor> WeightAverage::named() const {
  std::map<std::string, torch::Tensor> out;
  for (size_t i = 0; i < names_.size(); ++i) out[names_[i]] = average_[i];
  return out;
}

void WeightAverage::load(const std::map<std::string, torch::Tensor>& tensors, const std::string& source) {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < names_.size(); ++i) {
    const auto it = tensors.find(names_[i]);
    if (it == tensors.end() || it->second.sizes() != average_[i].sizes())
      throw Error(source + ": the weight average of '" + names_[i] + "' is missing or misshapen");
    average_[i].copy_(it->second);
  }
}

}  // namespace looplab
