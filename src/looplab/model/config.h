// Every hyper-parameter of the looped transformer (SPEC section 1), as stored in a model
// directory's config.json. No LibTorch here: the CLI, the tasks and `info` use it freely.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace looplab {

// How the input x0 re-enters each iteration (paper definitions 3.2, 5.1, 5.2).
enum class Recall {
  kNone,      // autonomous: x_{t+1} = f(x_t)
  kExternal,  // g(x, x0) replaces the residual stream at the start of each iteration
  kInternal,  // g(u, x0) feeds each sublayer; the state stays on the residual path
  kFixed,     // baseline: `blocks` distinct blocks applied once each, no recall
};

// Where RMSNorm sits (SPEC section 1 table). post and gru are outer normalizations.
enum class Norm { kPre, kPeri, kPost, kGru };

std::string to_string(Recall r);
std::string to_string(Norm n);
// Every valid name, in the enums' order: the one list the flags, their help and checks use.
const std::vector<std::string>& recall_names();
const std::vector<std::string>& norm_names();
// Parse a command-line or config value; throws looplab::Error listing the valid values.
Recall parse_recall(const std::string& s);
Norm parse_norm(const std::string& s);
bool has_outer_normalization(Norm n);

struct ModelConfig {
  std::string task;  // the task's name (tasks/registry.h)
  Recall recall = Recall::kExternal;
  Norm norm = Norm::kPost;
  int64_t width = 256;          // d
  int64_t heads = 8;            // head_dim = width / heads
  int64_t mlp_ratio = 4;        // MLP hidden = mlp_ratio * width
  int64_t blocks = 1;           // blocks per iteration; the fixed baseline uses 15
  int64_t in_channels = 1;
  int64_t out_channels = 2;
  std::vector<int64_t> grid = {32};  // training grid; its rank is the number of RoPE axes
  bool neighbourhood_attention = true;  // neighbourhood attention of `window` keys per axis, else full
  int64_t window = 5;
  double rope_base = 10000.0;
  // A halting head (`looplab train --halt-head`, eval/halting.h): Linear(d, 1) on the state's
  // mean over positions, the logit that the current answer is exactly right. config.json's
  // "halt_head", written only when true.
  bool halt_head = false;

  int64_t head_dim() const { return width / heads; }
  int64_t spatial_dims() const { return static_cast<int64_t>(grid.size()); }
};

// The paper's configuration of a task (SPEC sections 1 and 3) at the given width.
ModelConfig default_config(const std::string& task, Recall recall, Norm norm, int64_t width = 256);
// The grid of an input of `positions` tokens: 1-D tasks take any length, a task whose grid takes
// any square side (TaskSpec::any_square_side) any square; otherwise the config's grid. Throws
// looplab::Error naming what the model takes.
std::vector<int64_t> grid_for(const ModelConfig& c, int64_t positions);

// The architecture in words, one line per aspect (task, recall, norm, width, attention), as
// `looplab info` prints it.
std::string describe(const ModelConfig& c);

// Throws looplab::Error naming the field when the values cannot make a model.
void validate(const ModelConfig& c);

// A model as `looplab info` and `init` describe one: the task's default_config for this recall,
// norm and width, with the other fields set over it.
struct ModelShape {
  std::string task;  // "": the registry's first task
  std::string recall = "external", norm = "post";
  int64_t width = 256, heads = 8, mlp_ratio = 4;
  int64_t blocks = 0;  // 0: default_config's (1, or 15 for the fixed baseline)
  int64_t window = 0;  // 0: the task's (TaskSpec::window: 5, mazes 3)
};
// Validated; throws looplab::Error naming a bad name or value.
ModelConfig model_config(const ModelShape& s);

// The closed-form parameter count of SPEC section 1 (independent of the model code, so the
// tests can check one against the other).
int64_t parameter_count(const ModelConfig& c);

// config.json's "schema_version" (called "version" in versions 1 and 2, still read):
//   3: the key renamed, and "attention": "neighbourhood" (versions 1-2: "local"); the same model;
//   2: the inputs as the paper's released code encodes them (prefix sums: the bit minus 0.5;
//      chess: rank 8 in grid row 0);
//   1: looplab before 2026-12-03 (the bit; rank 1 in row 0), still read: run/model_folder.h
//      converts what it can.
inline constexpr int64_t kModelVersion = 3;
// The version of a config.json's object ("schema_version", else "version", else 1); throws
// looplab::Error for one newer than this looplab reads.
int64_t model_version(const nlohmann::json& j, const std::string& source);

nlohmann::json to_json(const ModelConfig& c);
// `source` names the file in error messages; each missing or ill-typed field is named.
ModelConfig config_from_json(const nlohmann::json& j, const std::string& source);

}  // namespace looplab
