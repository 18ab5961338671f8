#include "looplab/data/splits.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "looplab/tasks/chess/puzzles.h"
#include "looplab/tasks/prefix_sums/prefix_sums.h"
#include "looplab/tasks/sudoku/dataset.h"
#include "looplab/util/error.h"
#include "looplab/util/progress.h"
#include "looplab/util/random.h"

namespace looplab {

namespace {

constexpr const char* kSudokuPoolFile = "sudoku.csv";

Split prefix_sums_tensors(const std::string& name, const prefix_sums::Dataset& d) {
  const int64_t n = static_cast<int64_t>(d.size()), bits = d.bits;
  Split s;
  s.name = name;
  s.inputs = torch::empty({n, bits, 1}, torch::kFloat32);
  s.targets = torch::empty({n, bits}, torch::kInt64);
  auto in = s.inputs.accessor<float, 3>();
  auto tg = s.targets.accessor<int64_t, 2>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < bits; ++j) {
      in[i][j][0] = d.inputs[i][j];
      tg[i][j] = d.targets[i][j];
    }
  return s;
}

// One-hot over 10 channels (channel 0 = blank), target = the answer's digit (SPEC section 3).
Split sudoku_tensors(const std::string& name, const std::vector<sudoku::Puzzle>& puzzles,
                     const std::vector<int64_t>& pick) {
  const int64_t n = static_cast<int64_t>(pick.size());
  Split s;
  s.name = name;
  s.inputs = torch::zeros({n, 81, 10}, torch::kFloat32);
  s.targets = torch::empty({n, 81}, torch::kInt64);
  auto tg = s.targets.accessor<int64_t, 2>();
  for (int64_t i = 0; i < n; ++i) {
    const sudoku::Puzzle& p = puzzles[pick[i]];
    fill_sudoku_input(p.question, s.inputs[i].data_ptr<float>());
    for (int64_t c = 0; c < 81; ++c) tg[i][c] = p.answer[c];
  }
  return s;
}

// 12 planes: the six own piece types, then the opponent's (SPEC section 3); target 1 on the
// solution's from and to squares.
Split chess_tensors(const std::string& name, const std::vector<chess::Example>& examples) {
  const int64_t n = static_cast<int64_t>(examples.size());
  Split s;
  s.name = name;
  s.inputs = torch::zeros({n, 64, 12}, torch::kFloat32);
  s.targets = torch::zeros({n, 64}, torch::kInt64);
  auto tg = s.targets.accessor<int64_t, 2>();
  for (int64_t i = 0; i < n; ++i) {
    const chess::Example& e = examples[i];
    fill_chess_input(e.pieces, s.inputs[i].data_ptr<float>());
    tg[i][e.from] = 1;
    tg[i][e.to] = 1;
  }
  return s;
}

std::string resolve(const DataSettings& s, const std::string& file) {
  if (file.empty() || s.base_dir.empty() || std::filesystem::path(file).is_absolute()) return file;
  return (std::filesystem::path(s.base_dir) / file).string();
}

Split sudoku_split(const DataSettings& s, const std::string& split, const std::string& file, int64_t count) {
  if (!file.empty()) {  // a file for this split alone: all its puzzles
    const sudoku::Dataset d = sudoku::read_csv(resolve(s, file), s.skip_bad);
    std::vector<int64_t> all(d.puzzles.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
    return sudoku_tensors(split, d.puzzles, all);
  }
  if (s.data_file.empty())
    throw Error("sudoku: no puzzles given (--data-file FILE, or --" + split + "-file FILE; `looplab train` makes a pool)");
  const std::string path = resolve(s, s.data_file);
  const sudoku::Dataset d = sudoku::read_csv(path, s.skip_bad);
  const sudoku::RatingSplit bands = sudoku::split_by_rating(d.puzzles);
  // Fixed shuffles of each band, so train and val never overlap whatever the counts.
  const bool hard = split == "hard";
  const std::vector<int64_t>& band = hard ? bands.hard : bands.easy;
  const int64_t offset = split == "val" ? s.train_count : 0;
  if (offset + count > static_cast<int64_t>(band.size()))
    throw Error(path + ": " + std::to_string(band.size()) + (hard ? " hard puzzles (rating >= " : " easy puzzles (rating < ") +
                std::to_string(bands.cut) + "), need " +
                (hard ? std::to_string(count) + " for hard"
                      : std::to_string(s.train_count) + " for train + " + std::to_string(s.val_count) + " for val"));
  Random rng(Random::stream_seed(s.seed, hard ? 2 : 1));
  const std::vector<int64_t> order = rng.permutation(static_cast<int64_t>(band.size()));
  std::vector<int64_t> pick;
  for (int64_t i = offset; i < offset + count; ++i) pick.push_back(band[order[i]]);
  return sudoku_tensors(split, d.puzzles, pick);
}

// Easy (train, val): rating below 1600; hard: 1600-2000 (SPEC section 3). The database is
// ordered by puzzle id, effectively random, so the first puzzles of each band are a fair
// sample; they are shuffled with the data seed before train and val are cut.
Split chess_split(const DataSettings& s, const std::string& split, const std::string& file, int64_t count) {
  chess::ReadOptions options;
  options.skip_bad = s.skip_bad;
  if (!file.empty()) return chess_tensors(split, chess::read_lichess(resolve(s, file), options).examples);
  if (s.data_file.empty())
    throw Error("chess: no puzzles given (--data-file FILE: a Lichess puzzle CSV or .csv.zst, e.g. from `looplab data chess`)");
  const std::string path = resolve(s, s.data_file);
  const bool hard = split == "hard";
  options.min_rating = hard ? 1600 : 0;
  options.max_rating = hard ? 2000 : 1599;
  options.limit = hard ? s.hard_count : s.train_count + s.val_count;
  const std::vector<chess::Example> band = chess::read_lichess(path, options).examples;
  const int64_t offset = split == "val" ? s.train_count : 0;
  if (offset + count > static_cast<int64_t>(band.size()))
    throw Error(path + ": " + std::to_string(band.size()) + (hard ? " puzzles rated 1600-2000" : " puzzles rated below 1600") +
                ", need " +
                (hard ? std::to_string(count) + " for hard"
                      : std::to_string(s.train_count) + " for train + " + std::to_string(s.val_count) + " for val"));
  Random rng(Random::stream_seed(s.seed, hard ? 2 : 1));
  const std::vector<int64_t> order = rng.permutation(static_cast<int64_t>(band.size()));
  std::vector<chess::Example> pick;
  for (int64_t i = offset; i < offset + count; ++i) pick.push_back(band[order[i]]);
  return chess_tensors(split, pick);
}

}  // namespace

void fill_sudoku_input(const std::array<uint8_t, 81>& question, float* out) {
  for (int c = 0; c < 81; ++c) out[c * 10 + question[c]] = 1;
}

void fill_chess_input(const std::array<int8_t, 64>& pieces, float* out) {
  for (int sq = 0; sq < 64; ++sq) {
    const int p = pieces[sq];
    if (p != 0) out[sq * 12 + (chess::color_of(p) == chess::kWhite ? 0 : 6) + chess::type_of(p) - 1] = 1;
  }
}

DataSettings default_data_settings(const std::string& task) {
  DataSettings s;
  s.task = task;
  if (task == "sudoku" || task == "chess") s.train_count = 40000, s.val_count = 10000, s.hard_count = 10000;
  return s;
}

Split load_split(const DataSettings& s, const std::string& split) {
  int index;
  std::string file;
  int64_t count, bits;
  if (split == "train") {
    index = 0, file = s.train_file, count = s.train_count, bits = s.train_bits;
  } else if (split == "val") {
    index = 1, file = s.val_file, count = s.val_count, bits = s.train_bits;
  } else if (split == "hard") {
    index = 2, file = s.hard_file, count = s.hard_count, bits = s.hard_bits;
  } else {
    throw Error("unknown split '" + split + "' (expected train, val or hard)");
  }
  if (s.task == "sudoku") return sudoku_split(s, split, file, count);
  if (s.task == "chess") return chess_split(s, split, file, count);
  if (s.task != "prefix-sums") throw Error("task '" + s.task + "' has no data source yet");
  // Three independent streams of one seed: the splits never share a random sequence.
  const uint64_t seed = s.seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(index) + 1;
  return prefix_sums_tensors(split, file.empty() ? prefix_sums::generate(bits, count, seed)
                                                 : prefix_sums::read_csv(resolve(s, file)));
}

void prepare_pool(DataSettings& s, const std::string& dir) {
  if (s.task != "sudoku" || !s.data_file.empty()) return;
  if (!s.train_file.empty() && !s.val_file.empty() && !s.hard_file.empty()) return;
  // Easy is 80% of the pool and hard 20% (a little more with ties at the cut); 5% to spare.
  const auto need = static_cast<int64_t>(
      std::ceil(1.05 * std::max(static_cast<double>(s.train_count + s.val_count) / 0.8, s.hard_count / 0.2)));
  sudoku::GeneratorOptions options;
  options.threads = torch::get_num_threads();
  Progress progress("sudoku pool");
  const auto puzzles = sudoku::generate(need, s.seed, options, std::ref(progress));
  sudoku::write_csv((std::filesystem::path(dir) / kSudokuPoolFile).string(), puzzles);
  s.data_file = kSudokuPoolFile;
  s.base_dir = dir;
}

nlohmann::json to_json(const DataSettings& s) {
  return {{"task", s.task},           {"train_count", s.train_count}, {"val_count", s.val_count},
          {"hard_count", s.hard_count}, {"train_bits", s.train_bits},   {"hard_bits", s.hard_bits},
          {"seed", s.seed},           {"train_file", s.train_file},   {"val_file", s.val_file},
          {"hard_file", s.hard_file}, {"data_file", s.data_file},     {"skip_bad", s.skip_bad}};
}

DataSettings data_settings_from_json(const nlohmann::json& j, const std::string& source) {
  DataSettings s;
  try {
    s.task = j.at("task").get<std::string>();
    s.train_count = j.at("train_count").get<int64_t>();
    s.val_count = j.at("val_count").get<int64_t>();
    s.hard_count = j.at("hard_count").get<int64_t>();
    s.train_bits = j.at("train_bits").get<int64_t>();
    s.hard_bits = j.at("hard_bits").get<int64_t>();
    s.seed = j.at("seed").get<uint64_t>();
    s.train_file = j.value("train_file", "");
    s.val_file = j.value("val_file", "");
    s.hard_file = j.value("hard_file", "");
    s.data_file = j.value("data_file", "");
    s.skip_bad = j.value("skip_bad", false);
  } catch (const nlohmann::json::exception& e) {
    throw Error(source + ": data settings: " + e.what());
  }
  return s;
}

}  // namespace looplab
