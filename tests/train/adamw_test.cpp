// Our AdamW against LibTorch's own torch::optim::AdamW, step for step.
#include "looplab/train/adamw.h"

#include <gtest/gtest.h>

namespace looplab {
namespace {

TEST(AdamW, MatchesLibTorch) {
  torch::manual_seed(3);
  torch::OrderedDict<std::string, torch::Tensor> mine;
  std::vector<torch::Tensor> theirs;
  for (const char* name : {"a", "b"}) {
    const torch::Tensor init = torch::randn({4, 3}, torch::kFloat64);
    mine.insert(name, init.clone().requires_grad_(true));
    theirs.push_back(init.clone().requires_grad_(true));
  }
  const double lr = 0.05;
  AdamW ours(mine, {0.9, 0.999, 1e-8, 0.01});
  torch::optim::AdamW reference(theirs, torch::optim::AdamWOptions(lr).betas({0.9, 0.999}).eps(1e-8).weight_decay(0.01));
  for (int step = 0; step < 25; ++step) {
    const torch::Tensor target = torch::randn({4, 3}, torch::kFloat64);
    ours.zero_grad();
    reference.zero_grad();
    for (size_t i = 0; i < 2; ++i) {
      ((mine[i == 0 ? "a" : "b"] - target).pow(3).sum()).backward();
      ((theirs[i] - target).pow(3).sum()).backward();
    }
    ours.step(lr);
    reference.step();
  }
  EXPECT_LT((mine["a"] - theirs[0]).abs().max().item<double>(), 1e-12);
  EXPECT_LT((mine["b"] - theirs[1]).abs().max().item<double>(), 1e-12);
  EXPECT_EQ(ours.state().at("step").item<int64_t>(), 25);
}

TEST(AdamW, StateRoundTripContinuesIdentically) {
  torch::manual_seed(4);
  auto make = [] {
    torch::OrderedDict<std::string, torch::Tensor> p;
    p.insert("w", torch::ones({5}).requires_grad_(true));
    return p;
  };
  auto p1 = make(), p2 = make();
  AdamW a(p1, {}), b(p2, {});
  auto step = [](torch::OrderedDict<std::string, torch::Tensor>& p, AdamW& o, double x) {
    o.zero_grad();
    (p["w"] * p["w"] * x).sum().backward();
    o.step(0.1);
  };
  step(p1, a, 1.0);
  step(p2, b, 1.0);
  AdamW restored(p2, {});
  restored.load_state(b.state(), "state");
  step(p1, a, 2.0);
  step(p2, restored, 2.0);
  EXPECT_TRUE(torch::equal(p1["w"], p2["w"]));
}

}  // namespace
}  // namespace looplab
