// Mazes as a looplab task (issue 50): the easy-to-hard data set's perfect mazes (maze.h), one
// token per cell on a 2-D grid of any square side, kChannels input features per cell (its four
// passages, start, goal), two classes per cell (on the start-goal path or not), 2-D neighbourhood
// attention of 3 x 3 cells with 2-D RoPE. Trained on size 9 (5 x 5 cells), tested on larger
// sizes (59: 30 x 30 cells).
//
// Why one token per cell rather than per pixel as the paper's released code feeds images: a
// size-59 maze is 900 cells against 124 x 124 = 15,376 pixels, so attention and the MLP cost
// 17x less per iteration, which is what makes 59 x 59 evaluable at 1,000+ iterations on 2 cores;
// the conversion from the data set's images is exact (maze.h's from_image).
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "looplab/tasks/mazes/maze.h"
#include "looplab/tasks/task.h"
#include "looplab/util/error.h"
#include "looplab/util/random.h"

namespace looplab {

namespace {

// The mazes as examples: (n + 2 border)^2 positions each in row-major order, the maze's n x n
// cells in the middle, `border` rings of blocked cells around them (every feature 0, which no
// maze cell has: each has a passage; never on the path).
Examples encode(const std::vector<mazes::Maze>& all, int64_t border) {
  Examples e;
  const int64_t n = all.empty() ? 0 : all.front().n, side = n + 2 * border;
  e.resize(static_cast<int64_t>(all.size()), side * side, mazes::kChannels);  // all zero: the rings are set
  std::vector<float> cells(static_cast<size_t>(n * n * mazes::kChannels));
  for (int64_t i = 0; i < e.count; ++i) {
    mazes::encode(all[i], cells.data());
    const std::vector<uint8_t> path = mazes::solve(all[i]);
    float* in = e.input(i);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < n; ++c) {
        const int64_t at = (r + border) * side + (c + border);
        std::copy_n(&cells[static_cast<size_t>((r * n + c) * mazes::kChannels)], mazes::kChannels, in + at * mazes::kChannels);
        e.target(i)[at] = path[static_cast<size_t>(r * n + c)];
      }
  }
  return e;
}

// A split's file: the data set's folder (inputs.npy and solutions.npy, as maze_data_test_59),
// either .npy file of one, or a CSV of `looplab data mazes`.
std::vector<mazes::Maze> read_file_of_mazes(const std::string& file) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(file, ec)) return mazes::read_data_set(file);
  if (fs::path(file).extension() == ".npy") return mazes::read_data_set(fs::path(file).parent_path().string());
  return mazes::read_csv(file);
}

// The sizes of `looplab eval --scaling`: the training size, then the data set's test sizes up
// to 59 (every other one beyond 17).
constexpr int64_t kLevelSizes[] = {9, 11, 13, 15, 17, 21, 25, 33, 41, 49, 59};

class Mazes : public Task {
 public:
  const TaskSpec& spec() const override {
    static const TaskSpec s = [] {
      TaskSpec s{"mazes", {5, 5}, mazes::kChannels, 2, true, Decoding::kArgmax};
      // No table of the paper has mazes: no paper values beside its runs.
      s.paper_val_table = s.paper_hard_table = "";
      // 3 x 3 cells: a cell's own passages and its neighbours' (the released code's window of
      // 5 pixels spans about one cell of the data set's images).
      s.window = 3;
      s.any_square_side = true;
      return s;
    }();
    return s;
  }

  DataOptions default_data() const override {
    DataOptions d = Task::default_data();
    // The data set has 50,000 mazes of each small size and 1,000 of size 59.
    d.train_count = 10000, d.val_count = 1000, d.hard_count = 1000;
    return d;
  }

  Preset preset(const std::string& name) const override {
    Preset p;
    if (name == "paper") {
      // The released code's mazes settings (config/problem/mazes.yaml and its defaults): width
      // 256, 8 heads, batch 100, lr 1e-3, 150 epochs (cooled 10x at 60; its second cool-down
      // at 100 has no counterpart here); DeepThinking's 40,000 / 10,000 split of the 50,000.
      p.width = 256, p.heads = 8, p.train_count = 40000, p.val_count = 10000, p.hard_count = 1000;
      p.batch = 100, p.epochs = 150, p.cooldown_epoch = 60, p.lr = 1e-3;
      return p;
    }
    if (name == "cpu") {
      p.width = 64, p.heads = 4, p.train_count = 10000, p.val_count = 1000, p.hard_count = 200;
      p.batch = 100, p.epochs = 30, p.cooldown_epoch = 25, p.lr = 1e-3;
      return p;
    }
    return Task::preset(name);  // its error
  }

  Examples load(const DataOptions& s, const std::string& split) const override {
    const int64_t count = s.count(split);  // checks the split's name
    const std::string& file = s.file(split);
    if (!file.empty()) return encode(read_file_of_mazes(s.resolve(file)), s.border);
    const uint64_t index = split == "train" ? 0 : split == "val" ? 1 : 2;
    // Three independent streams of one seed: the splits never share a maze's random sequence.
    const uint64_t seed = s.seed * 0x9E3779B97F4A7C15ull + index + 1;
    return encode(mazes::generate_many(split == "hard" ? s.hard_size : s.train_size, count, seed, 0), s.border);
  }

  Difficulty difficulty_levels(const DataOptions& data, int64_t count) const override {
    Difficulty levels{"size", {}};
    std::vector<int64_t> sizes(std::begin(kLevelSizes), std::end(kLevelSizes));
    if (data.hard_size > sizes.back()) sizes.push_back(data.hard_size);  // e.g. 201
    for (int64_t size : sizes) {
      DataOptions d = data;
      d.hard_file.clear();
      d.hard_size = size;
      d.hard_count = count;
      const int64_t n = mazes::cells_per_side(size), side = n + 2 * data.border;
      levels.levels.push_back({"size " + std::to_string(size) + " (" + std::to_string(n) + " x " + std::to_string(n) + " cells)",
                               side * side, static_cast<double>(size), load(d, "hard")});
    }
    return levels;
  }

  Examples synthetic(int64_t count, int64_t positions, uint64_t seed) const override {
    int64_t n = 2;
    while (n * n < positions) ++n;
    if (n * n != positions) throw Error("mazes: " + std::to_string(positions) + " positions is not a square grid of cells");
    return encode(mazes::generate_many(2 * n - 1, count, seed, 0), 0);
  }

  Tool generator() const override {
    return {"mazes",
            "Perfect mazes with a start, a goal and their path (randomized depth-first search, as the easy-to-hard data set)",
            {{"size", "maze size as the data set names it (9, 11, ..., 59, 201): (size + 1) / 2 cells per side", "9"},
             {"count", "number of mazes", "1000"},
             {"seed", "random seed (the file is the same for any thread count)", "0"},
             {"format", "csv (size,start,goal,passages,path) or npy (the data set's folder: OUT/inputs.npy, OUT/solutions.npy)", "csv"},
             {"out", "the file (csv) or folder (npy) to write", "", Parameter::kValue, true}},
            [](const Values& v, int threads) {
              const int64_t size = int_value(v, "size"), count = int_value(v, "count");
              if (size < 3 || size % 2 == 0) throw OptionError("size", " must be odd and at least 3 (the data set's: 9, 11, ..., 59, 201)");
              if (count < 1) throw OptionError("count", " must be >= 1");
              const std::string& out = text_value(v, "out");
              const std::string& format = text_value(v, "format");
              if (format != "csv" && format != "npy") throw OptionError("format", " must be csv or npy (got '" + format + "')");
              const auto all = mazes::generate_many(size, count, seed_value(v, "seed"), threads);
              if (format == "csv") mazes::write_csv(out, all);
              else mazes::write_data_set(out, all);
              const int64_t n = mazes::cells_per_side(size);
              std::printf("wrote %lld mazes of size %lld (%lld x %lld cells) to %s\n", static_cast<long long>(count),
                          static_cast<long long>(size), static_cast<long long>(n), static_cast<long long>(n), out.c_str());
            }};
  }
};

}  // namespace

const Task& mazes_task() {
  static const Mazes t;
  return t;
}

}  // namespace looplab
