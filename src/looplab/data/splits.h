// The train, val and hard splits of a task as tensors (SPEC section 3), made from seeds or read
// from files. Training and evaluation both call this, so a run directory's recorded settings
// always give back the same examples.
#pragma once

#include <torch/torch.h>

#include <nlohmann/json_fwd.hpp>
#include <array>
#include <string>

namespace looplab {

struct DataSettings {
  std::string task = "prefix-sums";
  int64_t train_count = 8000, val_count = 2000, hard_count = 10000;
  int64_t train_bits = 32, hard_bits = 512;  // prefix sums: train and val length, hard length
  uint64_t seed = 0;                          // each split draws from its own stream of this seed
  std::string train_file, val_file, hard_file;  // CSV files replace the generated splits
  // Sudoku: one file of rated puzzles (sudoku-extreme format) split by rating into easy (train,
  // val) and hard; made by the trainer from `seed` when not given.
  std::string data_file;
  bool skip_bad = false;  // count and skip bad rows of the files instead of stopping
  // Not saved: relative file names are resolved against it (a run directory's files travel with it).
  std::string base_dir;
};

// SPEC section 3's sizes for a task.
DataSettings default_data_settings(const std::string& task);

struct Split {
  std::string name;
  torch::Tensor inputs;   // [N, positions, C_in], float32
  torch::Tensor targets;  // [N, positions], int64 class per position
  int64_t size() const { return inputs.size(0); }
};

// split: "train", "val" or "hard". Throws looplab::Error for an unknown split or bad file.
Split load_split(const DataSettings& settings, const std::string& split);

// One example's input as the model sees it (SPEC section 3), written to `out` (zeroed by the
// caller): sudoku [81, 10] one-hot with channel 0 = blank; chess [64, 12] piece planes, own
// pieces in channels 0-5 (P N B R Q K), the opponent's in 6-11, of an oriented board
// (chess::Example::pieces).
void fill_sudoku_input(const std::array<uint8_t, 81>& question, float* out);
void fill_chess_input(const std::array<int8_t, 64>& oriented_pieces, float* out);

// For tasks whose splits come from one pool of puzzles (sudoku): when `settings` names no file,
// generates the pool from the seed into `dir`/sudoku.csv (with progress on stderr), large
// enough for the requested split sizes, and points data_file at it. Other tasks: no-op.
void prepare_pool(DataSettings& settings, const std::string& dir);

nlohmann::json to_json(const DataSettings& s);
DataSettings data_settings_from_json(const nlohmann::json& j, const std::string& source);

}  // namespace looplab
