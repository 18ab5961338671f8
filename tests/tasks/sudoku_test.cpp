#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "looplab/io/atomic_file.h"
#include "looplab/tasks/sudoku/dataset.h"
#include "looplab/tasks/sudoku/generator.h"
#include "looplab/tasks/sudoku/solver.h"
#include "looplab/util/error.h"
#include "looplab/util/random.h"

namespace looplab::sudoku {
namespace {

namespace fs = std::filesystem;

// An independent solver for the tests: plain backtracking with no propagation and no
// bitmasks, candidates found by scanning the row, column and box, branching on the blank
// cell with the fewest candidates (without that, minimal puzzles take minutes).
bool allowed(const Grid& g, int cell, int d) {
  const int r = cell / 9, c = cell % 9, br = r / 3 * 3, bc = c / 3 * 3;
  for (int k = 0; k < 9; ++k)
    if (g[r * 9 + k] == d || g[k * 9 + c] == d || g[(br + k / 3) * 9 + bc + k % 3] == d) return false;
  return true;
}

void brute_force(Grid& g, int limit, int& found, Grid& first) {
  int best = -1, best_n = 10;
  for (int i = 0; i < 81; ++i) {
    if (g[i]) continue;
    int n = 0;
    for (int d = 1; d <= 9; ++d) n += allowed(g, i, d);
    if (n < best_n) best = i, best_n = n;
  }
  if (best < 0) {
    if (found++ == 0) first = g;
    return;
  }
  for (int d = 1; d <= 9 && found < limit; ++d)
    if (allowed(g, best, d)) {
      g[best] = static_cast<uint8_t>(d);
      brute_force(g, limit, found, first);
      g[best] = 0;
    }
}

int brute_force_count(Grid g, int limit, Grid* first = nullptr) {
  int found = 0;
  Grid f{};
  brute_force(g, limit, found, f);
  if (first) *first = f;
  return found;
}

// Arto Inkala's "world's hardest sudoku" (2012) and its published solution.
const char* kInkala = "800000000003600000070090200050007000000045700000100030001000068008500010090000400";
const char* kInkalaSolution = "812753649943682175675491283154237896369845721287169534521974368438526917796318452";

TEST(SudokuGrid, ParseAndPrint) {
  Grid g{};
  std::string why;
  ASSERT_TRUE(parse_grid(kInkala, g, why));
  EXPECT_EQ(g[0], 8);
  EXPECT_EQ(g[1], 0);
  EXPECT_EQ(clue_count(g), 21);
  EXPECT_EQ(to_string(g, '0'), kInkala);
  EXPECT_FALSE(parse_grid(std::string(kInkala).substr(1), g, why));
  EXPECT_EQ(why, "expected 81 characters, got 80");
  std::string bad(kInkala);
  bad[4] = 'x';
  EXPECT_FALSE(parse_grid(bad, g, why));
  EXPECT_EQ(why, "character 5 is 'x' (expected 1-9, '.' or '0')");
}

TEST(SudokuGrid, SolutionChecks) {
  const Grid q = parse_grid_or_throw(kInkala, "q"), a = parse_grid_or_throw(kInkalaSolution, "a");
  std::string why;
  EXPECT_TRUE(is_solution_of(q, a, &why)) << why;
  Grid swapped = a;
  std::swap(swapped[0], swapped[1]);  // rows stay valid, columns do not
  EXPECT_FALSE(is_solution_of(q, swapped, &why));
  EXPECT_NE(why.find("appears twice in column"), std::string::npos) << why;
  Grid other = a;
  // Swapping digits 8 and 1 everywhere keeps a valid grid that contradicts the clue 8 at cell 1.
  for (auto& d : other) d = d == 8 ? 1 : d == 1 ? 8 : d;
  EXPECT_FALSE(is_solution_of(q, other, &why));
  EXPECT_NE(why.find("disagrees with the clue at cell 1"), std::string::npos) << why;
}

TEST(SudokuSolver, SolvesInkalaUniquelyWithSearch) {
  const SolveResult r = solve(parse_grid_or_throw(kInkala, "q"), 2);
  EXPECT_EQ(r.solutions, 1);
  EXPECT_EQ(to_string(r.solution), kInkalaSolution);
  EXPECT_GT(r.backtracks, 0);  // it needs real search
  EXPECT_EQ(rating(parse_grid_or_throw(kInkala, "q")), r.backtracks);
  EXPECT_EQ(solve(parse_grid_or_throw(kInkala, "q"), 2).backtracks, r.backtracks);  // deterministic
}

TEST(SudokuSolver, SinglesAloneNeedNoGuess) {
  // The answer with one cell per row blanked: naked singles fill it.
  Grid g = parse_grid_or_throw(kInkalaSolution, "a");
  for (int r = 0; r < 9; ++r) g[r * 9 + (r * 4) % 9] = 0;
  const SolveResult r = solve(g, 2);
  EXPECT_EQ(r.solutions, 1);
  EXPECT_EQ(r.guesses, 0);
  EXPECT_EQ(r.backtracks, 0);
}

TEST(SudokuSolver, CountsSolutionsAndRejectsClashes) {
  EXPECT_EQ(solve(Grid{}, 5).solutions, 5);  // the empty grid has very many
  Grid clash{};
  clash[0] = 5;
  clash[8] = 5;
  EXPECT_EQ(solve(clash, 2).solutions, 0);
  // Two blanks that can be swapped: exactly two solutions (an "unavoidable rectangle").
  Grid a = parse_grid_or_throw(kInkalaSolution, "a");
  // Cells (r,c) (r,c') (r',c) (r',c') with a[r][c] = a[r'][c'] and a[r][c'] = a[r'][c], in two boxes.
  bool done = false;
  for (int r = 0; r < 9 && !done; ++r)
    for (int r2 = r + 1; r2 < 9 && !done; ++r2)
      for (int c = 0; c < 9 && !done; ++c)
        for (int c2 = c + 1; c2 < 9 && !done; ++c2) {
          const int i = r * 9 + c, j = r * 9 + c2, k = r2 * 9 + c, l = r2 * 9 + c2;
          const bool two_boxes = (r / 3 == r2 / 3) != (c / 3 == c2 / 3);
          if (two_boxes && a[i] == a[l] && a[j] == a[k]) {
            Grid g = a;
            g[i] = g[j] = g[k] = g[l] = 0;
            EXPECT_EQ(solve(g, 10).solutions, 2);
            EXPECT_EQ(brute_force_count(g, 10), 2);
            done = true;
          }
        }
  EXPECT_TRUE(done);
}

TEST(SudokuGenerator, ThousandPuzzlesAgreeWithBruteForce) {
  // Acceptance: on 1,000 generated puzzles the solver's solutions are valid, unique and agree
  // with the plain solver. Selection 1 keeps it quick; the puzzles are minimal ones.
  const std::vector<Puzzle> puzzles = generate(1000, 11, {{{"plain", 1, 100}}, 2});
  int64_t searched = 0;
  for (const Puzzle& p : puzzles) {
    std::string why;
    ASSERT_TRUE(is_solution_of(p.question, p.answer, &why)) << why;
    const SolveResult r = solve(p.question, 2);
    ASSERT_EQ(r.solutions, 1);
    ASSERT_EQ(r.solution, p.answer);
    Grid brute{};
    ASSERT_EQ(brute_force_count(p.question, 2, &brute), 1) << to_string(p.question);
    ASSERT_EQ(brute, p.answer);
    ASSERT_EQ(r.backtracks, p.rating);
    searched += r.guesses > 0;
  }
  EXPECT_GT(searched, 0);  // some need search, so the comparison covers the branching
}

TEST(SudokuGenerator, PuzzlesAreMinimal) {
  for (uint64_t i = 0; i < 5; ++i) {
    const Puzzle p = generate_puzzle(3, i, {{"plain", 1, 100}});
    for (int cell = 0; cell < 81; ++cell) {
      if (!p.question[cell]) continue;
      Grid g = p.question;
      g[cell] = 0;
      EXPECT_EQ(brute_force_count(g, 2), 2) << "clue " << cell << " of puzzle " << i << " is not needed";
    }
  }
}

TEST(SudokuGenerator, SameForAnyThreadCountAndSeedMatters) {
  const std::vector<Source> mix = {{"a", 1, 70}, {"b", 2, 30}};
  const auto one = generate(40, 5, {mix, 1}), two = generate(40, 5, {mix, 2});
  ASSERT_EQ(one.size(), 40u);
  int from_b = 0;
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i].question, two[i].question);
    EXPECT_EQ(one[i].rating, two[i].rating);
    EXPECT_EQ(one[i].source, two[i].source);
    from_b += one[i].source == "b";
  }
  EXPECT_GT(from_b, 0);
  EXPECT_LT(from_b, 40);
  EXPECT_NE(generate(1, 6, {mix, 1})[0].question, one[0].question);
  EXPECT_THROW(generate(1, 6, {{{"a", 1, 90}}, 1}), Error);  // shares must sum to 100
}

TEST(SudokuGenerator, SelectionKeepsTheHardest) {
  // With selection 4 the puzzle is the hardest of the four minimal puzzles its stream makes, so
  // it is rated at least as high as the selection-1 puzzle (the first of those four).
  for (uint64_t i = 0; i < 20; ++i) {
    Random a(i), b(i);
    EXPECT_GE(select_puzzle(a, 4).rating, select_puzzle(b, 1).rating);
  }
}

class SudokuCsv : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("looplab_sudoku_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::string error_of(const std::string& text) {
    const std::string path = write("bad.csv", text);
    try {
      read_csv(path);
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind(path + ":", 0), 0u) << msg;  // names the file first
      return msg.substr(path.size());
    }
    ADD_FAILURE() << "no error for:\n" << text;
    return "";
  }
  fs::path dir_;
};

TEST_F(SudokuCsv, RoundTripAndSplit) {
  const auto puzzles = generate(30, 1, {{{"s1", 1, 50}, {"s2", 2, 50}}, 2});
  const std::string path = (dir_ / "p.csv").string();
  write_csv(path, puzzles);
  const Dataset d = read_csv(path);
  ASSERT_EQ(d.puzzles.size(), 30u);
  for (size_t i = 0; i < 30; ++i) {
    EXPECT_EQ(d.puzzles[i].question, puzzles[i].question);
    EXPECT_EQ(d.puzzles[i].answer, puzzles[i].answer);
    EXPECT_EQ(d.puzzles[i].rating, puzzles[i].rating);
    EXPECT_EQ(d.puzzles[i].source, puzzles[i].source);
  }
}

TEST_F(SudokuCsv, EachKindOfBadRowNamesItsLineAndReason) {
  const std::string q = kInkala, a = kInkalaSolution;
  const std::string head = "source,question,answer,rating\nok," + q + "," + a + ",12\n";
  EXPECT_EQ(error_of(head + "x," + q + "," + a + "\n"), ":3: expected 4 fields, got 3");
  EXPECT_EQ(error_of(head + "x," + q.substr(1) + "," + a + ",1\n"), ":3: field 'question': expected 81 characters, got 80");
  std::string bad_char = q;
  bad_char[10] = 'a';
  EXPECT_EQ(error_of(head + "x," + bad_char + "," + a + ",1\n"),
            ":3: field 'question': character 11 is 'a' (expected 1-9, '.' or '0')");
  std::string blank = a;
  blank[80] = '.';
  EXPECT_EQ(error_of(head + "x," + q + "," + blank + ",1\n"), ":3: field 'answer': answer is incomplete (cell 81 is blank)");
  std::string dup = a;
  std::swap(dup[0], dup[1]);
  EXPECT_NE(error_of(head + "x," + q + "," + dup + ",1\n").find(":3: field 'answer': answer is not a valid grid: digit"),
            std::string::npos);
  std::string clue = q;
  clue[1] = '9';  // the answer has 1 there
  EXPECT_EQ(error_of(head + "x," + clue + "," + a + ",1\n"),
            ":3: field 'answer': answer disagrees with the clue at cell 2 (row 1, column 2): 9 vs 1");
  EXPECT_EQ(error_of(head + "x," + q + "," + a + ",-4\n"), ":3: field 'rating': '-4' is not a non-negative integer");
  EXPECT_EQ(error_of("source,question,rating\n"), ":1: header must name the columns source,question,answer,rating, got 'source,question,rating'");
  EXPECT_EQ(error_of("source,question,answer,rating\n"), ": no puzzles after the header");
}

TEST_F(SudokuCsv, SkipBadCountsAndKeepsTheGoodRows) {
  const std::string q = kInkala, a = kInkalaSolution;
  const std::string path = write("mixed.csv", "source,question,answer,rating\nok," + q + "," + a + ",3\nbad," + q +
                                                 ",,1\nok2," + q + "," + a + ",4\n");
  EXPECT_THROW(read_csv(path), Error);
  const Dataset d = read_csv(path, true);
  EXPECT_EQ(d.puzzles.size(), 2u);
  EXPECT_EQ(d.skipped, 1);
  EXPECT_EQ(d.puzzles[1].source, "ok2");
}

TEST(SudokuSplit, EightiethPercentileCut) {
  std::vector<Puzzle> puzzles;
  for (int64_t r : {0, 5, 1, 9, 2, 7, 3, 8, 4, 6}) puzzles.push_back(Puzzle{{}, {}, r, "s"});
  const RatingSplit s = split_by_rating(puzzles);
  EXPECT_EQ(s.cut, 7);  // the 8th smallest of 0..9
  EXPECT_EQ(s.easy.size(), 7u);
  EXPECT_EQ(s.hard, (std::vector<int64_t>{3, 5, 7}));  // ratings 9, 7, 8
  EXPECT_EQ(percentile_of({5, 1, 3}, 0.5), 3);
  EXPECT_EQ(percentile_of({5, 1, 3}, 0.0), 1);
  EXPECT_EQ(percentile_of({5, 1, 3}, 1.0), 5);
}

}  // namespace
}  // namespace looplab::sudoku

// --- The two sudoku-extreme files, split as the paper's released code does (issue 33 point 5) --
#include <algorithm>
#include <map>
#include <set>

#include "looplab/tasks/registry.h"

namespace looplab::sudoku {
namespace {

// A valid solution (Wikipedia's example); row i of a test file gets it with its digits shifted
// by i (and transposed from i = 9 on), so every row is a different puzzle, told apart by its
// answer. The question blanks every other cell.
const char* kBaseSolution = "534678912672195348198342567859761423426853791713924856961537284287419635345286179";
std::string answer_of_row(int i) {
  std::string a(81, '0');
  for (int c = 0; c < 81; ++c) {
    const int from = i >= 9 ? (c % 9) * 9 + c / 9 : c;
    a[c] = static_cast<char>('1' + (kBaseSolution[from] - '1' + i) % 9);
  }
  return a;
}
std::string question_of(const std::string& answer) {
  std::string q = answer;
  for (int c = 0; c < 81; c += 2) q[c] = '.';
  return q;
}

// A CSV whose line k + 2 (line 1 is the header) has rating ratings[k]; `answers` receives the
// answer of each line by its number.
std::string extreme_csv(const std::vector<int>& ratings, std::map<std::string, int>& answers) {
  std::string text = "source,question,answer,rating\n";
  for (size_t k = 0; k < ratings.size(); ++k) {
    const int line = static_cast<int>(k) + 2;
    const std::string a = answer_of_row(static_cast<int>(k));
    answers[a] = line;
    text += "line" + std::to_string(line) + "," + question_of(a) + "," + a + "," + std::to_string(ratings[k]) + "\n";
  }
  return text;
}

// The file lines the examples of a split came from, in the split's order.
std::vector<int> lines_of(const Examples& e, const std::map<std::string, int>& answers) {
  std::vector<int> out;
  for (int64_t i = 0; i < e.count; ++i) {
    std::string a(81, '0');
    for (int c = 0; c < 81; ++c) a[c] = static_cast<char>('0' + e.targets[i * 81 + c]);
    const auto it = answers.find(a);
    out.push_back(it == answers.end() ? -1 : it->second);
  }
  return out;
}
std::set<int> set_of(const std::vector<int>& v) { return {v.begin(), v.end()}; }

// train.csv: 15 ratings, sorted 0 1 2 3 4 5 6 7 8 9 12 13 20 40 50. numpy.percentile(..., 80):
// h = 14 * 0.8 = 11.2, so 13 + 0.2 * (20 - 13) = 14.4; the nearest rank (the 12th smallest) is 13.
const std::vector<int> kTrainRatings = {40, 13, 0, 50, 7, 12, 20, 1, 9, 2, 3, 8, 4, 5, 6};  // lines 2..16
// test.csv: 14 and 13 are hard by the nearest rank only; 30, 15, 100, 20 are hard by both.
const std::vector<int> kTestRatings = {14, 2, 13, 30, 15, 0, 100, 20};  // lines 2..9

TEST(SudokuExtreme, InterpolatedPercentileAsNumpy) {
  EXPECT_DOUBLE_EQ(interpolated_percentile({4, 1, 3, 2}, 0.5), 2.5);  // numpy.percentile([1,2,3,4], 50)
  EXPECT_DOUBLE_EQ(interpolated_percentile({0, 10}, 0.8), 8.0);
  EXPECT_DOUBLE_EQ(interpolated_percentile({50, 15, 40, 20, 35}, 0.4), 29.0);  // h = 1.6: 20 + 0.6 * 15
  EXPECT_DOUBLE_EQ(interpolated_percentile({7}, 0.8), 7.0);
  EXPECT_DOUBLE_EQ(interpolated_percentile({3, 9, 1}, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(interpolated_percentile({3, 9, 1}, 1.0), 9.0);
  std::vector<int64_t> train(kTrainRatings.begin(), kTrainRatings.end());
  EXPECT_NEAR(interpolated_percentile(train, 0.8), 14.4, 1e-12);
  EXPECT_EQ(percentile_of(train, 0.8), 13);  // looplab's own rule differs here
}

TEST_F(SudokuCsv, ExtremeFilesSplitAsTheReleasedCode) {
  std::map<std::string, int> train_lines, test_lines;
  const std::string train = write("train.csv", extreme_csv(kTrainRatings, train_lines));
  const std::string test = write("test.csv", extreme_csv(kTestRatings, test_lines));
  ASSERT_EQ(train_lines.size(), kTrainRatings.size());  // every row a different puzzle
  EXPECT_NEAR(file_rating_percentile(train, 0.8), 14.4, 1e-12);

  const Task& sudoku = looplab::task("sudoku");
  DataOptions d = sudoku.default_data();
  d.data_file = train;
  d.hard_file = test;
  d.train_count = 4, d.val_count = 2, d.hard_count = 3;
  // Rated below 14.4, in file order: lines 3 (13) 4 (0) 6 (7) 7 (12) 9 (1) 10 (9) 11 12 13 14 15 16.
  // Train + val are the first six of them, partitioned at random.
  for (uint64_t seed : {0, 1, 2}) {
    d.seed = seed;
    const std::vector<int> t = lines_of(sudoku.load(d, "train"), train_lines);
    const std::vector<int> v = lines_of(sudoku.load(d, "val"), train_lines);
    EXPECT_EQ(t.size(), 4u);
    EXPECT_EQ(v.size(), 2u);
    std::set<int> both = set_of(t);
    both.insert(v.begin(), v.end());
    EXPECT_EQ(both, (std::set<int>{3, 4, 6, 7, 9, 10})) << "seed " << seed;  // and so disjoint
  }
  // Hard: the first three of test.csv rated at least 14.4, in file order (30, 15, 100).
  EXPECT_EQ(lines_of(sudoku.load(d, "hard"), test_lines), (std::vector<int>{5, 6, 8}));
  d.hard_count = 4;
  EXPECT_EQ(lines_of(sudoku.load(d, "hard"), test_lines), (std::vector<int>{5, 6, 8, 9}));
  // Every easy row, then one too many.
  d.train_count = 10, d.val_count = 2;
  std::set<int> all = set_of(lines_of(sudoku.load(d, "train"), train_lines));
  for (int line : lines_of(sudoku.load(d, "val"), train_lines)) all.insert(line);
  EXPECT_EQ(all, (std::set<int>{3, 4, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16}));
  // What load throws, or "" where it does not.
  auto load_error = [&](const std::string& split) -> std::string {
    try {
      sudoku.load(d, split);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  d.val_count = 3;
  EXPECT_EQ(load_error("val"), train + ": 12 puzzles rated below 14.4 (the 80th percentile of train.csv's "
                                       "ratings, interpolated), need 10 for train + 3 for val");
  d.hard_count = 5;
  EXPECT_EQ(load_error("hard"), test + ": 4 puzzles rated at or above 14.4 (the 80th percentile of train.csv's "
                                       "ratings, interpolated), need 5 for hard");
}

TEST_F(SudokuCsv, OneDataFileKeepsLooplabsRule) {
  // train.csv alone: the nearest-rank cut 13, random draws from each band. Rated 13 or more:
  // lines 2 (40), 3 (13), 5 (50), 8 (20).
  std::map<std::string, int> lines;
  DataOptions d = looplab::task("sudoku").default_data();
  d.data_file = write("train.csv", extreme_csv(kTrainRatings, lines));
  d.train_count = 4, d.val_count = 2, d.hard_count = 4;
  EXPECT_EQ(set_of(lines_of(looplab::task("sudoku").load(d, "hard"), lines)), (std::set<int>{2, 3, 5, 8}));
}

// `eval --scaling`: bands at the nearest-rank 50th, 80th, 95th and 99th percentiles of the
// pool's ratings, less the puzzles train and val use.
TEST_F(SudokuCsv, DifficultyLevelsAreRatingBandsLessTrainAndVal) {
  std::map<std::string, int> lines;
  const Task& sudoku = looplab::task("sudoku");
  DataOptions d = sudoku.default_data();
  d.data_file = write("train.csv", extreme_csv(kTrainRatings, lines));
  d.train_count = 4, d.val_count = 2, d.hard_count = 2;
  // The 15 ratings sorted: 0 1 2 3 4 5 6 7 8 9 12 13 20 40 50. Cuts: the 8th smallest (7), the
  // 12th (13), the 15th (50) twice, so the bands are 0-6, 7-12, 13-49 and 50 or more (the
  // 95th-99th band is empty). By line: 0-6 lines 4 9 11 12 14 15 16; 7-12 lines 6 7 10 13;
  // 13-49 lines 2 (40) 3 (13) 8 (20); 50 line 5.
  const std::vector<std::vector<int>> band_lines = {{4, 9, 11, 12, 14, 15, 16}, {6, 7, 10, 13}, {2, 3, 8}, {5}};
  for (uint64_t seed : {0, 1}) {
    d.seed = seed;
    std::set<int> used = set_of(lines_of(sudoku.load(d, "train"), lines));
    for (int line : lines_of(sudoku.load(d, "val"), lines)) used.insert(line);
    ASSERT_EQ(used.size(), 6u);
    const Difficulty levels = sudoku.difficulty_levels(d, 100);
    EXPECT_EQ(levels.measure, "rating (solver backtracks)");
    ASSERT_EQ(levels.levels.size(), 4u);
    const std::vector<std::string> labels = {"rating 0-6", "rating 7-12", "rating 13-49", "rating 50 or more"};
    for (size_t b = 0; b < 4; ++b) {
      std::vector<int> want;
      for (int line : band_lines[b])
        if (!used.count(line)) want.push_back(line);
      EXPECT_EQ(levels.levels[b].label, labels[b]);
      EXPECT_EQ(levels.levels[b].size, 81);
      EXPECT_EQ(lines_of(levels.levels[b].examples, lines), want) << "band " << b << ", seed " << seed;
    }
    // The hard bands hold no train or val puzzle: their medians by hand (13 20 40; 50).
    EXPECT_EQ(levels.levels[2].difficulty, 20);
    EXPECT_EQ(levels.levels[3].difficulty, 50);
    // One per level: the first of each band in file order.
    const Difficulty one = sudoku.difficulty_levels(d, 1);
    EXPECT_EQ(lines_of(one.levels[2].examples, lines), (std::vector<int>{2}));
    EXPECT_EQ(one.levels[2].difficulty, 40);
  }
  // With sudoku-extreme's two files the levels come from test.csv, none of it trained on:
  // ratings sorted 0 2 13 14 15 20 30 100; cuts the 4th (14), the ceil(6.4) = 7th (30) and the
  // 8th (100) twice.
  d.hard_file = write("test.csv", extreme_csv(kTestRatings, lines));
  const Difficulty extreme = sudoku.difficulty_levels(d, 100);
  // 0-13: lines 3 (2) 4 (13) 7 (0); 14-29: lines 2 (14) 6 (15) 9 (20); 30-99: line 5; 100: line 8.
  ASSERT_EQ(extreme.levels.size(), 4u);
  EXPECT_EQ(extreme.levels[0].label, "rating 0-13");
  EXPECT_EQ(lines_of(extreme.levels[0].examples, lines), (std::vector<int>{3, 4, 7}));
  EXPECT_EQ(lines_of(extreme.levels[1].examples, lines), (std::vector<int>{2, 6, 9}));
  EXPECT_EQ(extreme.levels[1].difficulty, 15);
  EXPECT_EQ(lines_of(extreme.levels[2].examples, lines), (std::vector<int>{5}));
  EXPECT_EQ(lines_of(extreme.levels[3].examples, lines), (std::vector<int>{8}));
}

TEST_F(SudokuCsv, ExtremeFilesBadRowsNameFileLineAndField) {
  std::map<std::string, int> lines;
  std::string text = extreme_csv(kTrainRatings, lines);
  // A rating past the rows taken is still read (the cut needs every rating).
  const std::string bad_rating = write("bad_rating.csv", text + "x," + question_of(answer_of_row(0)) + "," +
                                                             answer_of_row(0) + ",many\n");
  try {
    file_rating_percentile(bad_rating, 0.8);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), bad_rating + ":17: field 'rating': 'many' is not a non-negative integer");
  }
  // With skip_bad the row is left out of the cut.
  EXPECT_NEAR(file_rating_percentile(bad_rating, 0.8, true), 14.4, 1e-12);
  // A bad answer in a row that is taken (line 3, rated 13, the first easy one).
  std::string wrong = answer_of_row(1);
  std::swap(wrong[0], wrong[1]);
  const size_t at = text.find(answer_of_row(1) + ",13");
  ASSERT_NE(at, std::string::npos);
  const std::string bad_answer = write("bad_answer.csv", text.replace(at, 81, wrong));
  try {
    first_rated(bad_answer, 6, 14.4, true);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(bad_answer + ":3: field 'answer': ", 0), 0u) << e.what();
  }
  const Dataset skipped = first_rated(bad_answer, 6, 14.4, true, true);
  EXPECT_EQ(skipped.skipped, 1);
  ASSERT_EQ(skipped.puzzles.size(), 6u);
  EXPECT_EQ(skipped.puzzles[0].source, "line4");
  EXPECT_EQ(skipped.puzzles[5].source, "line11");
}

}  // namespace
}  // namespace looplab::sudoku
