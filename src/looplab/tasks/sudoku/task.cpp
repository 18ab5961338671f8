// Sudoku as a looplab task (SPEC section 3): 9x9 grids, 10 input channels (one-hot, channel 0 =
// blank), 10 classes per cell (the answer's digit), full attention; train and val from the easy
// band of one rated file, hard from the hard band (80th percentile of the rating), or from the
// two sudoku-extreme files as the paper's released code splits them.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <sstream>

#include "looplab/io/atomic_file.h"
#include "looplab/tasks/rated_puzzles.h"
#include "looplab/tasks/sudoku/benchmark.h"
#include "looplab/tasks/sudoku/dataset.h"
#include "looplab/tasks/sudoku/solver.h"
#include "looplab/tasks/task.h"
#include "looplab/util/error.h"
#include "looplab/util/progress.h"

namespace looplab {

namespace {

constexpr const char* kPoolFile = "sudoku.csv";

// One-hot over 10 channels (channel 0 = blank), target = the answer's digit.
void encode_grid(const sudoku::Grid& question, float* out) {
  for (int c = 0; c < 81; ++c) out[c * 10 + question[c]] = 1;
}

Examples encode(const std::vector<sudoku::Puzzle>& puzzles, const std::vector<int64_t>& pick) {
  Examples e;
  e.resize(static_cast<int64_t>(pick.size()), 81, 10);
  for (int64_t i = 0; i < e.count; ++i) {
    const sudoku::Puzzle& p = puzzles[pick[i]];
    encode_grid(p.question, e.input(i));
    for (int c = 0; c < 81; ++c) e.target(i)[c] = p.answer[c];
  }
  return e;
}

// --- looplab sudoku solve | stats ---------------------------------------------------------

struct Numbered {
  int64_t line;
  sudoku::Grid question;
  bool has_answer = false;
  sudoku::Grid answer{};
};

// A sudoku-extreme CSV (recognised by its header) or one 81-character puzzle per line
// ('#' starts a comment line).
std::vector<Numbered> read_puzzles(const std::string& path, bool skip_bad) {
  const std::string text = read_file(path);
  std::vector<Numbered> out;
  if (text.rfind("source,", 0) == 0 || text.find(",question,") != std::string::npos) {
    const sudoku::Dataset d = sudoku::read_csv(path, skip_bad);
    int64_t row = 1;
    for (const auto& p : d.puzzles) out.push_back({++row, p.question, true, p.answer});
    return out;
  }
  std::istringstream in(text);
  std::string line;
  for (int64_t n = 1; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    sudoku::Grid g{};
    std::string why;
    if (!sudoku::parse_grid(line, g, why)) {
      if (skip_bad) continue;
      throw Error(path + ":" + std::to_string(n) + ": " + why);
    }
    out.push_back({n, g});
  }
  if (out.empty()) throw Error(path + ": no puzzles");
  return out;
}

void solve_file(const std::string& file, bool skip_bad, bool pretty) {
  const auto puzzles = read_puzzles(file, skip_bad);
  const auto start = std::chrono::steady_clock::now();
  int64_t unique = 0, none = 0, multiple = 0, disagree = 0;
  for (const Numbered& p : puzzles) {
    const sudoku::SolveResult r = sudoku::solve(p.question, 2);
    const char* verdict = r.solutions == 0 ? "no solution" : r.solutions == 1 ? "unique" : "several solutions";
    (r.solutions == 0 ? none : r.solutions == 1 ? unique : multiple) += 1;
    std::string extra;
    if (p.has_answer && r.solutions >= 1 && r.solution != p.answer) {
      ++disagree;
      extra = " (differs from the file's answer)";
    }
    std::printf("line %lld: %s  backtracks %lld  %s%s\n", static_cast<long long>(p.line),
                r.solutions ? sudoku::to_string(r.solution).c_str() : std::string(81, '-').c_str(),
                static_cast<long long>(r.backtracks), verdict, extra.c_str());
    if (pretty && r.solutions) std::printf("%s\n", sudoku::to_pretty(r.solution).c_str());
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%zu puzzles: %lld unique, %lld with several solutions, %lld without; %.0f puzzles per second\n",
              puzzles.size(), static_cast<long long>(unique), static_cast<long long>(multiple),
              static_cast<long long>(none), s > 0 ? puzzles.size() / s : 0.0);
  if (disagree) throw Error(file + ": " + std::to_string(disagree) + " solutions differ from the file's answers");
}

class Sudoku : public Task {
 public:
  const TaskSpec& spec() const override {
    static const TaskSpec s{"sudoku", {9, 9}, 10, 10, false, Decoding::kArgmax, TaskSpec::Version1Inputs::kSame,
                            "table6_sudoku_val", "table6_sudoku_hard"};
    return s;
  }

  DataOptions default_data() const override { return puzzle_data(Task::default_data()); }
  Preset preset(const std::string& name) const override { return puzzle_preset(Task::preset(name), name); }

  Examples load(const DataOptions& s, const std::string& split) const override {
    s.count(split);  // checks the split's name
    const std::string& file = s.file(split);
    // The data file and the hard file together: sudoku-extreme's train.csv and test.csv.
    if (!s.data_file.empty() && !s.hard_file.empty() && (split == "hard" || file.empty()))
      return load_extreme(s, split);
    if (!file.empty()) {  // a file for this split alone: all its puzzles
      const sudoku::Dataset d = sudoku::read_csv(s.resolve(file), s.skip_bad);
      return encode(d.puzzles, all_of(d.puzzles.size()));
    }
    if (s.data_file.empty())
      throw Error("sudoku: no puzzles given (a data file of rated puzzles, or a file for the " + split +
                  " split; a new run makes a pool)");
    const std::string path = s.resolve(s.data_file);
    const sudoku::Dataset d = sudoku::read_csv(path, s.skip_bad);
    const sudoku::RatingSplit bands = sudoku::split_by_rating(d.puzzles);
    const bool hard = split == "hard";
    const std::string band = (hard ? "hard puzzles (rating >= " : "easy puzzles (rating < ") + std::to_string(bands.cut) + ")";
    return encode(d.puzzles, pick_from_band(hard ? bands.hard : bands.easy, s, split, path, band));
  }

  // Without a file: a pool generated from the data seed into the run folder, large enough for
  // the requested split sizes (easy is 80% of the pool, hard 20%, a little more with ties at the
  // cut; 5% to spare).
  void prepare(DataOptions& s, const std::string& dir, int threads) const override {
    if (!s.data_file.empty()) return;
    if (!s.train_file.empty() && !s.val_file.empty() && !s.hard_file.empty()) return;
    const auto need = static_cast<int64_t>(
        std::ceil(1.05 * std::max(static_cast<double>(s.train_count + s.val_count) / 0.8, s.hard_count / 0.2)));
    sudoku::GeneratorOptions options;
    options.threads = threads;
    Progress progress("sudoku pool");
    const auto puzzles = sudoku::generate(need, s.seed, options, std::ref(progress));
    sudoku::write_csv((std::filesystem::path(dir) / kPoolFile).string(), puzzles);
    s.data_file = kPoolFile;
    s.base_dir = dir;
  }

  Examples synthetic(int64_t count, int64_t positions, uint64_t seed) const override {
    return random_one_hot(count, positions, 10, 10, seed);
  }

  // Bands of the rated pool's ratings at its 50th, 80th (the hard split's cut), 95th and 99th
  // percentiles (nearest rank), each level the first puzzles of its band in file order that train
  // and val do not use. With sudoku-extreme's two files, the bands of test.csv, which no split
  // trains on.
  Difficulty difficulty_levels(const DataOptions& s, int64_t count) const override {
    if (s.data_file.empty())
      throw Error("--scaling: sudoku's levels come from a rated pool, and this run has none (it reads its splits from "
                  "their own files)");
    const bool extreme = !s.hard_file.empty();
    const std::string path = s.resolve(extreme ? s.hard_file : s.data_file);
    const sudoku::Dataset d = sudoku::read_csv(path, s.skip_bad);
    std::vector<int64_t> ratings;
    for (const sudoku::Puzzle& p : d.puzzles) ratings.push_back(p.rating);
    std::vector<bool> used(d.puzzles.size(), false);
    if (!extreme) {
      const sudoku::RatingSplit bands = sudoku::split_by_rating(d.puzzles);
      for (const char* split : {"train", "val"})
        for (int64_t i : pick_from_band(bands.easy, s, split, path, "easy puzzles")) used[i] = true;
    }
    const int64_t c50 = sudoku::percentile_of(ratings, 0.5), c80 = sudoku::percentile_of(ratings, 0.8),
                  c95 = sudoku::percentile_of(ratings, 0.95), c99 = sudoku::percentile_of(ratings, 0.99);
    Difficulty out{"rating (solver backtracks)", {}};
    for (const RatedLevel& l :
         rated_levels(ratings, used, {{0, c50 - 1}, {c50, c80 - 1}, {c80, c95 - 1}, {c95, c99 - 1}, {c99, INT64_MAX}}, count))
      out.levels.push_back({l.label, 81, l.median, encode(d.puzzles, l.picks)});
    return out;
  }

  Tool generator() const override {
    return {"sudoku",
            "Minimal puzzles with unique solutions, rated by solver backtracks (sudoku-extreme format)",
            {{"count", "number of puzzles", "60000"},
             {"seed", "random seed (the file is the same for any thread count)", "0"},
             {"selection", "make every puzzle the hardest of K minimal ones (default: the mixture of docs/sudoku.md)", "0"},
             {"out", "CSV file to write", "", Parameter::kValue, true}},
            [](const Values& v, int threads) {
              const int64_t count = int_value(v, "count"), selection = int_value(v, "selection");
              if (count < 1) throw OptionError("count", " must be >= 1");
              sudoku::GeneratorOptions options;
              if (selection != 0) {
                if (selection < 1) throw OptionError("selection", " must be >= 1");
                options.sources = {{"looplab-select" + std::to_string(selection), static_cast<int>(selection), 100}};
              }
              options.threads = threads;
              Progress progress("sudoku puzzles");
              const auto puzzles = sudoku::generate(count, seed_value(v, "seed"), options, std::ref(progress));
              const std::string& out = text_value(v, "out");
              sudoku::write_csv(out, puzzles);
              std::printf("wrote %lld puzzles to %s in %.1f s on %d threads\n", static_cast<long long>(count),
                          out.c_str(), progress.seconds(), options.threads);
              std::cout << sudoku::rating_report(puzzles);
            }};
  }

  std::vector<Tool> tools() const override {
    return {{"solve",
             "Solve every puzzle of a file; print each solution and its backtracks",
             {{"FILE", "81-character lines, or a CSV with header source,question,answer,rating", "", Parameter::kPositional, true},
              {"skip-bad", "count and skip bad rows instead of stopping at the first", "", Parameter::kFlag},
              {"pretty", "print each solution as a 9x9 grid", "", Parameter::kFlag}},
             [](const Values& v, int) { solve_file(text_value(v, "FILE"), flag_value(v, "skip-bad"), flag_value(v, "pretty")); }},
            {"stats",
             "Rating percentiles and the 80th-percentile easy/hard split of a CSV",
             {{"FILE", "CSV with header source,question,answer,rating", "", Parameter::kPositional, true},
              {"skip-bad", "count and skip bad rows", "", Parameter::kFlag}},
             [](const Values& v, int) {
               const sudoku::Dataset d = sudoku::read_csv(text_value(v, "FILE"), flag_value(v, "skip-bad"));
               if (d.skipped) std::printf("skipped %lld bad rows\n", static_cast<long long>(d.skipped));
               std::cout << sudoku::rating_report(d.puzzles);
             }}};
  }
  std::string tools_help() const override { return "The backtrack-counting sudoku solver and puzzle statistics"; }

  std::vector<Tool> benchmarks() const override {
    return {{"sudoku",
             "Puzzle generation rate (all threads and one) and solving rate per band",
             {{"count", "puzzles to generate with all threads", "2000"}, {"seed", "random seed", "1"}},
             [](const Values& v, int threads) { sudoku::run_benchmark(int_value(v, "count"), seed_value(v, "seed"), threads); }}};
  }

  SolveOption solve_option() const override { return {"puzzle", "sudoku: 81 characters, '.' or '0' for a blank"}; }

  Examples encode_query(const std::string& text) const override {
    Examples e;
    e.resize(1, 81, 10);
    encode_grid(parse(text), e.input(0));
    return e;
  }

  std::string describe_answer(const std::string& text, const std::vector<int64_t>& classes, const std::vector<float>&,
                              int64_t iters) const override {
    const sudoku::Grid question = parse(text);
    sudoku::Grid answer{};
    for (int c = 0; c < 81; ++c) answer[c] = static_cast<uint8_t>(classes[c]);
    std::string why;
    const bool valid = sudoku::is_solution_of(question, answer, &why);
    const sudoku::SolveResult solver = sudoku::solve(question, 2);
    int wrong = 0;
    for (int c = 0; c < 81; ++c) wrong += solver.solutions >= 1 && answer[c] != solver.solution[c];
    char buf[256];
    std::string out;
    std::snprintf(buf, sizeof buf, "puzzle (%d clues; the solver needs %lld backtracks%s):\n", sudoku::clue_count(question),
                  static_cast<long long>(solver.backtracks),
                  solver.solutions == 0 ? ", no solution" : solver.solutions > 1 ? ", several solutions" : "");
    out += buf + sudoku::to_pretty(question) + "\n";
    std::snprintf(buf, sizeof buf, "model's answer after %lld iterations:\n", static_cast<long long>(iters));
    out += buf + sudoku::to_pretty(answer) + "\n";
    out += std::string("valid solution: ") + (valid ? "yes" : "no (" + why + ")") + "\n";
    if (solver.solutions == 1) out += "cells differing from the solver's solution: " + std::to_string(wrong) + " of 81\n";
    return out;
  }

 private:
  // The released code's rule (`sudoku_data.py`; SPEC section 3, docs/sudoku.md): the cut is the
  // interpolated 80th percentile of every rating of train.csv (the data file); train and val
  // are the first train_count + val_count puzzles of train.csv rated below it, in file order,
  // partitioned at random (looplab's Random with the data seed: the released code's permutation
  // is torch's with seed 42, which looplab does not reproduce); hard is the first hard_count
  // puzzles of test.csv (the hard file) rated at or above it, in file order.
  static Examples load_extreme(const DataOptions& s, const std::string& split) {
    const std::string train_path = s.resolve(s.data_file), test_path = s.resolve(s.hard_file);
    const double cut = sudoku::file_rating_percentile(train_path, 0.8, s.skip_bad);
    char text[64];
    std::snprintf(text, sizeof text, "%.6g", cut);
    const std::string of = std::string(text) + " (the 80th percentile of " +
                           std::filesystem::path(train_path).filename().string() + "'s ratings, interpolated)";
    if (split == "hard") {
      const auto d = sudoku::first_rated(test_path, s.hard_count, cut, false, s.skip_bad);
      if (static_cast<int64_t>(d.puzzles.size()) < s.hard_count)
        throw Error(test_path + ": " + std::to_string(d.puzzles.size()) + " puzzles rated at or above " + of +
                    ", need " + std::to_string(s.hard_count) + " for hard");
      return encode(d.puzzles, all_of(d.puzzles.size()));
    }
    const auto d = sudoku::first_rated(train_path, s.train_count + s.val_count, cut, true, s.skip_bad);
    return encode(d.puzzles, pick_from_band(all_of(d.puzzles.size()), s, split, train_path, "puzzles rated below " + of));
  }

  static sudoku::Grid parse(const std::string& text) {
    sudoku::Grid g{};
    std::string why;
    if (!sudoku::parse_grid(text, g, why)) throw OptionError("puzzle", ": " + why);
    return g;
  }
};

}  // namespace

const Task& sudoku_task() {
  static const Sudoku t;
  return t;
}

}  // namespace looplab
