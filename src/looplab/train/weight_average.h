// An exponential moving average of a model's weights (`looplab train --ema D`, issue 35 point 4;
// as HRM and TRM keep one): after every optimizer step, for each parameter,
// ema <- D ema + (1 - D) w, starting from the weights it was made with (no bias correction).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "looplab/model/looped_transformer.h"

namespace looplab {

class WeightAverage {
 public:
  // The average starts as a copy of the model's weights. The model must outlive it.
  WeightAverage(LoopedTransformerImpl& model, double decay);

  // ema <- decay ema + (1 - decay) w, for every parameter.
  void update();
  // Exchanges the model's weights with the average (twice restores both), so that evaluation and
  // saving see the averaged weights and training goes on from the trained ones.
  void swap();

  // By parameter name, for the checkpoint; `load` throws looplab::Error naming `source` for a
  // missing or misshapen tensor.
  std::map<std::string, torch::Tensor> named() const;
  void load(const std::map<std::string, torch::Tensor>& tensors, const std::string& source);

 private:
  double decay_;
  std::vector<std::string> names_;
  std::vector<torch::Tensor> weights_;  // the model's own parameters
  std::vector<torch::Tensor> average_;
};

}  // namespace looplab
