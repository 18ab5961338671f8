// The weight average (--ema, train/weight_average.h) checked by hand: two updates of decay 0.9
// from known weights give the values worked out below; swap exchanges and restores; the
// checkpoint's tensors load back, and a missing one is an error naming the file.
#include <gtest/gtest.h>

#include "looplab/train/weight_average.h"
#include "looplab/util/error.h"
#include "tiny_model.h"

namespace looplab {
namespace {

void add_to_weights(LoopedTransformerImpl& model, double x) {
  torch::NoGradGuard no_grad;
  for (auto& p : model.parameters()) p.add_(x);
}

TEST(WeightAverage, UpdatesByHand) {
  LoopedTransformer model = tiny_model(1);
  std::vector<torch::Tensor> start;
  for (const auto& p : model->parameters()) start.push_back(p.detach().clone());
  WeightAverage ema(*model, 0.9);
  // w1 = w0 + 1: ema = 0.9 w0 + 0.1 (w0 + 1) = w0 + 0.1.
  add_to_weights(*model, 1.0);
  ema.update();
  // w2 = w0 + 3: ema = 0.9 (w0 + 0.1) + 0.1 (w0 + 3) = w0 + 0.39.
  add_to_weights(*model, 2.0);
  ema.update();
  const auto named = ema.named();
  size_t i = 0;
  for (const auto& item : model->named_parameters()) {
    EXPECT_LT((named.at(item.key()) - (start[i] + 0.39)).abs().max().item<double>(), 1e-12) << item.key();
    EXPECT_LT((item.value() - (start[i] + 3)).abs().max().item<double>(), 1e-12) << item.key();
    ++i;
  }
  // swap: the model holds the average, the average the trained weights; twice: as before.
  ema.swap();
  i = 0;
  for (const auto& p : model->parameters()) EXPECT_LT((p - (start[i++] + 0.39)).abs().max().item<double>(), 1e-12);
  ema.swap();
  i = 0;
  for (const auto& p : model->parameters()) EXPECT_LT((p - (start[i++] + 3)).abs().max().item<double>(), 1e-12);
}

TEST(WeightAverage, LoadsItsTensorsAndNamesAMissingOne) {
  LoopedTransformer model = tiny_model(1);
  WeightAverage ema(*model, 0.5);
  add_to_weights(*model, 2.0);
  ema.update();  // w0 + 1
  std::map<std::string, torch::Tensor> saved;
  for (const auto& [name, t] : ema.named()) saved[name] = t.clone();
  WeightAverage other(*model, 0.5);  // w0 + 2
  other.load(saved, "checkpoint.safetensors");
  for (const auto& [name, t] : other.named()) EXPECT_TRUE(torch::equal(t, saved.at(name))) << name;
  saved.erase(saved.begin());
  try {
    other.load(saved, "checkpoint.safetensors");
    FAIL() << "a missing tensor loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("checkpoint.safetensors"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace looplab
