// The train, val and hard splits of a task as tensors (SPEC section 3), made from seeds or read
// from files. Training and evaluation both call this, so a run directory's recorded settings
// always give back the same examples.
#pragma once

#include <torch/torch.h>

#include <nlohmann/json_fwd.hpp>
#include <string>

namespace looplab {

struct DataSettings {
  std::string task = "prefix-sums";
  int64_t train_count = 8000, val_count = 2000, hard_count = 10000;
  int64_t train_bits = 32, hard_bits = 512;  // prefix sums: train and val length, hard length
  uint64_t seed = 0;                          // each split draws from its own stream of this seed
  std::string train_file, val_file, hard_file;  // CSV files replace the generated splits
};

struct Split {
  std::string name;
  torch::Tensor inputs;   // [N, positions, C_in], float32
  torch::Tensor targets;  // [N, positions], int64 class per position
  int64_t size() const { return inputs.size(0); }
};

// split: "train", "val" or "hard". Throws looplab::Error for an unknown split or bad file.
Split load_split(const DataSettings& settings, const std::string& split);

nlohmann::json to_json(const DataSettings& s);
DataSettings data_settings_from_json(const nlohmann::json& j, const std::string& source);

}  // namespace looplab
