// Parameter counts: the model's real modules against SPEC's closed form, and the reference
// state-dict names.
#include <gtest/gtest.h>

#include <set>

#include "looplab/model/looped_transformer.h"
#include "looplab/tasks/registry.h"

namespace looplab {
namespace {

int64_t numel(const torch::nn::Module& m) {
  int64_t n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

std::vector<TaskSpec> all_task_specs() {
  std::vector<TaskSpec> specs;
  for (const Task* t : all_tasks()) specs.push_back(t->spec());
  return specs;
}

TEST(Parameters, EveryVariantMatchesTheFormulaAtPaperWidth) {
  for (const TaskSpec& task : all_task_specs())
    for (Recall r : {Recall::kNone, Recall::kExternal, Recall::kInternal, Recall::kFixed})
      for (Norm n : {Norm::kPre, Norm::kPeri, Norm::kPost, Norm::kGru}) {
        const ModelConfig c = default_config(task.name, r, n, 256);
        LoopedTransformer model(c);
        EXPECT_EQ(numel(*model), parameter_count(c)) << task.name << " " << to_string(r) << " " << to_string(n);
      }
}

TEST(Parameters, SpecFigures) {
  auto count = [](const std::string& task, Recall r, Norm n) {
    return parameter_count(default_config(task, r, n, 256));
  };
  EXPECT_EQ(count("prefix-sums", Recall::kExternal, Norm::kPost), 987714);
  EXPECT_EQ(count("prefix-sums", Recall::kExternal, Norm::kGru), 1382722);
  // Pieces of SPEC section 1: attention + MLP + QK-norms = 788,800; recall 131,584; GRU 394,752;
  // head 66,048 + 257 C_out; projection 256 (C_in + 1).
  const int64_t none_pre = count("chess", Recall::kNone, Norm::kPre);
  EXPECT_EQ(none_pre, 788800 + 256 + (66048 + 257 * 2) + 256 * 13);
  EXPECT_EQ(count("chess", Recall::kExternal, Norm::kPre) - none_pre, 131584);
  EXPECT_EQ(count("chess", Recall::kNone, Norm::kGru) - count("chess", Recall::kNone, Norm::kPeri), 394752);
  EXPECT_EQ(count("sudoku", Recall::kNone, Norm::kPre), 788800 + 256 + (66048 + 257 * 10) + 256 * 11);
  // The fixed 15-block baseline: about 11.9M, 17.8M with GRU (paper B.1.2).
  EXPECT_NEAR(count("prefix-sums", Recall::kFixed, Norm::kPre) / 1e6, 11.9, 0.05);
  EXPECT_NEAR(count("prefix-sums", Recall::kFixed, Norm::kGru) / 1e6, 17.8, 0.05);
}

TEST(Parameters, NamesAreThePaperStateDictKeys) {
  LoopedTransformer model(default_config("sudoku", Recall::kExternal, Norm::kGru, 32));
  std::set<std::string> names;
  for (const auto& item : model->named_parameters()) names.insert(item.key());
  const std::set<std::string> want = {
      "projection.weight", "projection.bias",
      "recur_blocks.0.attn.qkv.weight", "recur_blocks.0.attn.qkv.bias",
      "recur_blocks.0.attn.out_proj.weight", "recur_blocks.0.attn.out_proj.bias",
      "recur_blocks.0.attn.q_norm.weight", "recur_blocks.0.attn.k_norm.weight",
      "recur_blocks.0.mlp.0.weight", "recur_blocks.0.mlp.0.bias",
      "recur_blocks.0.mlp.2.weight", "recur_blocks.0.mlp.2.bias",
      "recur_blocks.0.Wx.weight", "recur_blocks.0.Wx.bias", "recur_blocks.0.Wh.weight", "recur_blocks.0.Wh.bias",
      "recur_blocks.0.pre_norm_func.weight", "recur_blocks.0.peri_norm_func.weight",
      "recur_blocks.0.gru.weight_ih", "recur_blocks.0.gru.weight_hh",
      "recur_blocks.0.gru.bias_ih", "recur_blocks.0.gru.bias_hh",
      "head.0.weight", "head.1.weight", "head.1.bias", "head.3.weight", "head.3.bias"};
  EXPECT_EQ(names, want);
  LoopedTransformer post(default_config("chess", Recall::kNone, Norm::kPost, 32));
  EXPECT_TRUE(post->named_parameters().contains("recur_blocks.0.post_norm_func.weight"));
  EXPECT_FALSE(post->named_parameters().contains("recur_blocks.0.Wx.weight"));
}

}  // namespace
}  // namespace looplab
