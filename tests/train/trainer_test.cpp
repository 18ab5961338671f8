// Training runs: resuming gives exactly the weights of an uninterrupted run.
#include "looplab/run/run_folder.h"
#include "looplab/train/trainer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "looplab/io/tensor_io.h"
#include "looplab/run/model_folder.h"
#include "looplab/util/error.h"

namespace looplab {
namespace {

namespace fs = std::filesystem;

RunSpec tiny_spec(int64_t epochs) {
  RunSpec s = preset_spec("cpu", "prefix-sums", Recall::kExternal, Norm::kPost);
  s.model.width = 16;
  s.model.heads = 2;
  s.data.train_count = 48;
  s.data.val_count = 16;
  s.data.train_bits = 8;
  s.train.batch = 16;
  s.train.training_iters = 4;
  s.train.epochs = epochs;
  s.train.seed = 3;
  return s;
}

class TrainerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("looplab_trainer_" + std::to_string(::getpid()));
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(TrainerTest, TwoEpochsResumeOneEqualsThreeStraight) {
  const std::string straight = (root_ / "straight").string(), resumed = (root_ / "resumed").string();
  train(straight, tiny_spec(3), torch::kCPU);
  train(resumed, tiny_spec(2), torch::kCPU);
  resume(resumed, 3, torch::kCPU);
  const auto a = read_tensors(straight + "/" + RunFolder::kWeights), b = read_tensors(resumed + "/" + RunFolder::kWeights);
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, t] : a) EXPECT_TRUE(torch::equal(t, b.at(name))) << name;
  // The weights did change from their initialization.
  torch::manual_seed(3);
  LoopedTransformer init(tiny_spec(3).model);
  EXPECT_FALSE(torch::equal(init->named_parameters()["head.3.weight"], a.at("head.3.weight")));
  // One metrics line per epoch, epochs 0, 1, 2.
  std::ifstream metrics(resumed + "/metrics.jsonl");
  std::string line;
  int lines = 0;
  while (std::getline(metrics, line)) EXPECT_NE(line.find("\"epoch\":" + std::to_string(lines++)), std::string::npos);
  EXPECT_EQ(lines, 3);
  EXPECT_TRUE(fs::exists(resumed + "/" + RunFolder::kBest));
}

TEST_F(TrainerTest, RefusesToOverwriteARunAndChecksOptions) {
  const std::string dir = (root_ / "run").string();
  train(dir, tiny_spec(1), torch::kCPU);
  EXPECT_THROW(train(dir, tiny_spec(1), torch::kCPU), Error);
  RunSpec bad = tiny_spec(1);
  bad.train.alpha = 1.5;
  EXPECT_THROW(train((root_ / "bad").string(), bad, torch::kCPU), Error);
  EXPECT_THROW(preset_spec("gpu-farm", "prefix-sums", Recall::kNone, Norm::kPre), Error);
  EXPECT_THROW(resume((root_ / "absent").string(), 0, torch::kCPU), Error);
}

}  // namespace
}  // namespace looplab
