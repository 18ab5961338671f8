// Our AdamW against LibTorch's own torch::optim::AdamW, step for step, and its weight-decay
// groups against the released code's rule on every parameter name of every variant.
#include "looplab/train/adamw.h"

#include <gtest/gtest.h>

#include <set>

#include "looplab/model/looped_transformer.h"

namespace looplab {
namespace {

TEST(AdamW, MatchesLibTorch) {
  torch::manual_seed(3);
  torch::OrderedDict<std::string, torch::Tensor> mine;
  std::vector<torch::Tensor> theirs;
  for (const char* name : {"a.weight", "b.bias"}) {
    const torch::Tensor init = torch::randn({4, 3}, torch::kFloat64);
    mine.insert(name, init.clone().requires_grad_(true));
    theirs.push_back(init.clone().requires_grad_(true));
  }
  const double lr = 0.05;
  AdamW ours(mine, {0.9, 0.999, 1e-8, 0.01});
  // Two groups as the released code makes them: decay 0.01 on the weight, none on the bias.
  const auto options = torch::optim::AdamWOptions(lr).betas({0.9, 0.999}).eps(1e-8);
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<torch::Tensor>{theirs[0]},
                      std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(options).weight_decay(0.01)));
  groups.emplace_back(std::vector<torch::Tensor>{theirs[1]},
                      std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(options).weight_decay(0.0)));
  torch::optim::AdamW reference(groups, options);
  for (int step = 0; step < 25; ++step) {
    const torch::Tensor target = torch::randn({4, 3}, torch::kFloat64);
    ours.zero_grad();
    reference.zero_grad();
    for (size_t i = 0; i < 2; ++i) {
      ((mine[i == 0 ? "a.weight" : "b.bias"] - target).pow(3).sum()).backward();
      ((theirs[i] - target).pow(3).sum()).backward();
    }
    ours.step(lr);
    reference.step();
  }
  EXPECT_LT((mine["a.weight"] - theirs[0]).abs().max().item<double>(), 1e-12);
  EXPECT_LT((mine["b.bias"] - theirs[1]).abs().max().item<double>(), 1e-12);
  EXPECT_EQ(ours.state().at("step").item<int64_t>(), 25);
}

// The fused update (ATen's _fused_adamw_, what `train` runs on CUDA) against the loop above, on
// the CPU where ATen has the same operator: float32 parameters in both weight-decay groups, one
// of them without a gradient in some steps, 30 steps, then 10 more after the state is saved and
// loaded into a new optimizer (the fused step counts are made again from the saved step).
TEST(AdamW, FusedEqualsTheLoop) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  torch::manual_seed(4);
  const std::vector<std::string> names = {"a.weight", "a.bias", "n.q_norm.weight", "b.weight"};
  torch::OrderedDict<std::string, torch::Tensor> loop, fused;
  std::map<std::string, torch::Tensor> start;
  for (const std::string& name : names) {
    const torch::Tensor init = torch::randn({5, 7});
    start[name] = init;
    loop.insert(name, init.clone().requires_grad_(true));
    fused.insert(name, init.clone().requires_grad_(true));
  }
  AdamWOptions options{0.9, 0.999, 1e-8, 0.05};
  AdamW ours(loop, options);
  options.fused = true;
  auto theirs = std::make_unique<AdamW>(fused, options);
  for (int step = 0; step < 40; ++step) {
    if (step == 30) {  // a resumed run
      const auto state = theirs->state();
      theirs = std::make_unique<AdamW>(fused, options);
      theirs->load_state(state, "test");
    }
    ours.zero_grad();
    theirs->zero_grad();
    for (size_t i = 0; i < names.size(); ++i) {
      if (i == 3 && step % 3 == 0) continue;  // b.weight: no gradient in every third step
      const torch::Tensor g = torch::randn({5, 7});
      loop[names[i]].mutable_grad() = g.clone();
      fused[names[i]].mutable_grad() = g.clone();
    }
    ours.step(0.01);
    theirs->step(0.01);
  }
  for (const std::string& name : names) {
    const double scale = loop[name].abs().max().item<double>();
    EXPECT_LT((loop[name] - fused[name]).abs().max().item<double>(), 1e-5 * scale) << name;
    EXPECT_LT((ours.state().at(name + ".exp_avg_sq") - theirs->state().at(name + ".exp_avg_sq")).abs().max().item<double>(),
              1e-6)
        << name;
  }
  EXPECT_EQ(theirs->state().at("step").item<int64_t>(), 40);
  // Not equal by standing still: 40 steps of 0.01 moved every parameter.
  for (const std::string& name : names) EXPECT_GT((loop[name] - start[name]).abs().max().item<double>(), 0.05) << name;
#else
  GTEST_SKIP() << "LibTorch before 2.4 has no _fused_adamw_ on the CPU";
#endif
}

// Every parameter of every recall x norm, classified by a table written by hand from the released
// code's names: each name must end in one of these, so a new kind of parameter fails here until
// its group is decided.
TEST(AdamW, WeightDecayGroupsOfEveryVariant) {
  const std::vector<std::pair<std::string, bool>> table = {
      // (name ends with, decayed)
      {"head.0.weight", true},  // the head's RMSNorm scale: its name has no "norm"
      {"q_norm.weight", false},         {"k_norm.weight", false},
      {"pre_norm_func.weight", false},  {"peri_norm_func.weight", false}, {"post_norm_func.weight", false},
      {"gru.weight_ih", true},          {"gru.weight_hh", true},
      {"gru.bias_ih", false},           {"gru.bias_hh", false},
      {".bias", false},                 {".weight", true},  // Linear layers
  };
  std::set<std::string> seen;
  for (Recall r : {Recall::kNone, Recall::kExternal, Recall::kInternal, Recall::kFixed})
    for (Norm n : {Norm::kPre, Norm::kPeri, Norm::kPost, Norm::kGru}) {
      ModelConfig c = default_config("sudoku", r, n, 32);
      c.heads = 4;
      if (r == Recall::kFixed) c.blocks = 2;
      LoopedTransformer model(c);
      int64_t undecayed = 0;
      for (const auto& item : model->named_parameters()) {
        const std::string& name = item.key();
        const auto entry = std::find_if(table.begin(), table.end(), [&](const auto& e) {
          return name.size() >= e.first.size() && name.compare(name.size() - e.first.size(), e.first.size(), e.first) == 0;
        });
        ASSERT_NE(entry, table.end()) << name << ": a parameter the table does not know";
        EXPECT_EQ(weight_decayed(name), entry->second) << name << " (" << to_string(r) << ", " << to_string(n) << ")";
        undecayed += entry->second ? 0 : 1;
        seen.insert(entry->first);
      }
      EXPECT_GT(undecayed, 0);
    }
  EXPECT_EQ(seen.size(), table.size()) << "every row of the table is met by some variant";
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
