// Model directories: bit-exact round trip and strict, clear errors.
#include "looplab/run/model_folder.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "looplab/io/atomic_file.h"
#include "looplab/io/tensor_io.h"
#include "looplab/util/error.h"

namespace looplab {
namespace {

namespace fs = std::filesystem;

class ModelDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() / ("looplab_modeldir_" + std::to_string(::getpid()))).string();
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST_F(ModelDirTest, RoundTripIsBitExact) {
  torch::manual_seed(9);
  LoopedTransformer model(default_config("sudoku", Recall::kInternal, Norm::kGru, 32));
  save_model(dir_, *model);
  LoopedTransformer back = load_model(dir_);
  EXPECT_EQ(to_json(back->config()), to_json(model->config()));
  auto a = model->named_parameters(), b = back->named_parameters();
  ASSERT_EQ(a.size(), b.size());
  for (const auto& item : a) EXPECT_TRUE(torch::equal(item.value(), b[item.key()])) << item.key();
  // And the outputs agree exactly.
  torch::NoGradGuard no_grad;
  const torch::Tensor x = torch::randn({2, 81, 10});
  EXPECT_TRUE(torch::equal(model->forward(x, 4).logits, back->forward(x, 4).logits));
}

// A version-1 folder (looplab before 2026-12-03) of prefix sums took the bit; loaded now it
// takes bit - 0.5 and computes what it computed: its outputs on the old encoding, by the saved
// weights run by hand through a second model, equal the loaded model's on the new one. A
// version-1 chess folder cannot be carried over (rank 1 in row 0) and says so.
TEST_F(ModelDirTest, VersionOneFoldersConvertOrRefuse) {
  torch::manual_seed(12);
  ModelConfig c = default_config("prefix-sums", Recall::kExternal, Norm::kPost, 32);
  c.heads = 4;
  LoopedTransformer old(c);
  save_model(dir_, *old);
  nlohmann::json j = nlohmann::json::parse(read_file(dir_ + "/config.json"));
  EXPECT_EQ(j["schema_version"], 3);
  EXPECT_FALSE(j.contains("version"));
  // Version 2 named the key "version": read as the same encoding.
  j.erase("schema_version");
  j["version"] = 2;
  write_file_atomic(dir_ + "/config.json", j.dump());
  EXPECT_TRUE(torch::equal(load_model(dir_)->projection->bias, old->projection->bias));
  j["version"] = 1;
  write_file_atomic(dir_ + "/config.json", j.dump());
  LoopedTransformer now = load_model(dir_);
  const torch::Tensor bits = torch::randint(0, 2, {3, 20, 1}).to(torch::kFloat32);
  torch::NoGradGuard no_grad;
  const auto before = old->forward(bits, 4);         // version 1: fed the bit
  const auto after = now->forward(bits - 0.5, 4);    // version 2: fed the bit minus 0.5
  EXPECT_LT((before.logits - after.logits).abs().max().item<double>(), 1e-5);
  EXPECT_FALSE(torch::equal(now->projection->bias, old->projection->bias));

  ModelConfig chess = default_config("chess", Recall::kExternal, Norm::kPost, 32);
  chess.heads = 4;
  const std::string chess_dir = dir_ + "/chess";
  save_model(chess_dir, *LoopedTransformer(chess));
  j = nlohmann::json::parse(read_file(chess_dir + "/config.json"));
  j.erase("schema_version");
  j["version"] = 1;
  write_file_atomic(chess_dir + "/config.json", j.dump());
  EXPECT_NE(error_of([&] { load_model(chess_dir); }).find("config.json: key 'version': 1: a chess model"),
            std::string::npos);
  j.erase("version");
  j["schema_version"] = 4;
  write_file_atomic(chess_dir + "/config.json", j.dump());
  EXPECT_NE(error_of([&] { load_model(chess_dir); }).find("config.json: schema_version 4 is newer than this looplab reads (3)"),
            std::string::npos);
}

TEST_F(ModelDirTest, StrictAboutNamesAndShapes) {
  LoopedTransformer model(default_config("chess", Recall::kExternal, Norm::kPost, 32));
  save_model(dir_, *model);
  const std::string weights = dir_ + "/" + RunFolder::kWeights;
  auto tensors = read_tensors(weights);

  auto renamed = tensors;
  renamed["recur_blocks.0.Wz.weight"] = renamed.at("recur_blocks.0.Wx.weight");
  renamed.erase("recur_blocks.0.Wx.weight");
  write_tensors(weights, renamed);
  EXPECT_NE(error_of([&] { load_model(dir_); }).find("unexpected tensor 'recur_blocks.0.Wz.weight'"),
            std::string::npos);

  auto missing = tensors;
  missing.erase("head.3.bias");
  write_tensors(weights, missing);
  EXPECT_NE(error_of([&] { load_model(dir_); }).find("tensor 'head.3.bias' is missing"), std::string::npos);

  auto reshaped = tensors;
  reshaped["projection.weight"] = torch::zeros({32, 10});
  write_tensors(weights, reshaped);
  EXPECT_NE(error_of([&] { load_model(dir_); }).find("'projection.weight' has shape [32, 10]"), std::string::npos);

  write_file_atomic(weights, "garbage");
  EXPECT_NE(error_of([&] { load_model(dir_); }).find("not a valid safetensors file"), std::string::npos);

  write_file_atomic(dir_ + "/" + RunFolder::kConfig, "{\"task\": ");
  EXPECT_NE(error_of([&] { load_model(dir_); }).find("config.json: not valid JSON"), std::string::npos);

  EXPECT_EQ(error_of([&] { load_model(dir_ + "/absent"); }), dir_ + "/absent/config.json: no such file");
}

}  // namespace
}  // namespace looplab

namespace looplab {
namespace {

TEST(Forward, ChecksTheInputShape) {
  LoopedTransformer model(default_config("sudoku", Recall::kNone, Norm::kPre, 32));
  torch::NoGradGuard no_grad;
  EXPECT_NE(error_of([&] { model->forward(torch::zeros({2, 80, 10}), 1); }).find("input has 80 positions; a sudoku model expects 81 (a 9x9 grid"),
            std::string::npos);
  EXPECT_NE(error_of([&] { model->forward(torch::zeros({2, 81, 9}), 1); }).find("[batch, positions, 10]"),
            std::string::npos);
  // 1-D tasks take any length.
  LoopedTransformer prefix(default_config("prefix-sums", Recall::kExternal, Norm::kPost, 32));
  EXPECT_EQ(prefix->forward(torch::zeros({1, 3, 1}), 2).logits.sizes(), (std::vector<int64_t>{1, 3, 2}));
  EXPECT_EQ(prefix->forward(torch::zeros({1, 512, 1}), 2).logits.sizes(), (std::vector<int64_t>{1, 512, 2}));
}

}  // namespace
}  // namespace looplab
