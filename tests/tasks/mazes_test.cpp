#include "looplab/tasks/mazes/maze.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <set>

#include "looplab/io/atomic_file.h"
#include "looplab/io/npy.h"
#include "looplab/tasks/registry.h"
#include "looplab/tasks/task.h"
#include "looplab/util/error.h"
#include "looplab/util/random.h"

namespace looplab {
namespace {

namespace fs = std::filesystem;
using mazes::Maze;

// The open neighbours of a cell, from the passages alone (written here, not Maze::open).
std::vector<int64_t> neighbours(const Maze& m, int64_t cell) {
  const int64_t n = m.n, r = cell / n, c = cell % n;
  std::vector<int64_t> out;
  if (c + 1 < n && m.east[cell]) out.push_back(cell + 1);
  if (c > 0 && m.east[cell - 1]) out.push_back(cell - 1);
  if (r + 1 < n && m.south[cell]) out.push_back(cell + n);
  if (r > 0 && m.south[cell - n]) out.push_back(cell - n);
  return out;
}

// The number of simple paths from a to b, counted by exhaustive depth-first search (stops
// counting at 2).
int paths_between(const Maze& m, int64_t a, int64_t b) {
  std::vector<uint8_t> on(m.cells(), 0);
  int found = 0;
  std::function<void(int64_t)> walk = [&](int64_t cell) {
    if (found > 1) return;
    if (cell == b) {
      ++found;
      return;
    }
    on[cell] = 1;
    for (int64_t to : neighbours(m, cell))
      if (!on[to]) walk(to);
    on[cell] = 0;
  };
  walk(a);
  return found;
}

// The same passages, start and goal, maze by maze.
void expect_same_mazes(const std::vector<Maze>& got, const std::vector<Maze>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].east, want[i].east) << i;
    EXPECT_EQ(got[i].south, want[i].south) << i;
    EXPECT_EQ(got[i].start, want[i].start) << i;
    EXPECT_EQ(got[i].goal, want[i].goal) << i;
  }
}

TEST(Mazes, SizesAreTheDataSetsNames) {
  EXPECT_EQ(mazes::cells_per_side(9), 5);
  EXPECT_EQ(mazes::cells_per_side(59), 30);
  EXPECT_EQ(mazes::cells_per_side(201), 101);
  // make_mazes.py's images: 9 -> 24, 13 -> 32, 33 -> 72, 59 -> 124 pixels.
  EXPECT_EQ(mazes::image_side(9), 24);
  EXPECT_EQ(mazes::image_side(13), 32);
  EXPECT_EQ(mazes::image_side(33), 72);
  EXPECT_EQ(mazes::image_side(59), 124);
  for (int64_t bad : {-1, 0, 1, 2, 10, 58}) EXPECT_THROW(mazes::cells_per_side(bad), Error) << bad;
}

// Every pair of cells of every maze has exactly one path between them (searched exhaustively).
TEST(Mazes, GeneratedMazesArePerfect) {
  for (int64_t size : {3, 5, 9, 11}) {
    const std::vector<Maze> all = mazes::generate_many(size, 20, 3, 2);
    for (const Maze& m : all) {
      ASSERT_EQ(m.n, (size + 1) / 2);
      EXPECT_NE(m.start, m.goal);
      EXPECT_EQ(mazes::imperfection(m), "");
      for (int64_t a = 0; a < m.cells(); ++a)
        for (int64_t b = a + 1; b < m.cells(); ++b) ASSERT_EQ(paths_between(m, a, b), 1) << "size " << size << " cells " << a << ", " << b;
    }
  }
  // Larger ones: connected with n^2 - 1 passages (a tree), counted here.
  for (const Maze& m : mazes::generate_many(59, 10, 4, 2)) {
    int64_t passages = 0;
    for (int64_t cell = 0; cell < m.cells(); ++cell) passages += m.east[cell] + m.south[cell];
    EXPECT_EQ(passages, m.cells() - 1);
    std::set<int64_t> seen = {0};
    std::vector<int64_t> todo = {0};
    while (!todo.empty()) {
      const int64_t cell = todo.back();
      todo.pop_back();
      for (int64_t to : neighbours(m, cell))
        if (seen.insert(to).second) todo.push_back(to);
    }
    EXPECT_EQ(static_cast<int64_t>(seen.size()), m.cells());
  }
}

TEST(Mazes, ImperfectMazesAreNamed) {
  Random rng(1);
  Maze m = mazes::generate(9, rng);
  Maze loop = m;
  for (int64_t cell = 0; cell < m.cells(); ++cell)
    if (cell % m.n < m.n - 1 && !loop.east[cell]) {
      loop.east[cell] = 1;  // a second path somewhere
      break;
    }
  EXPECT_NE(mazes::imperfection(loop).find("open passages"), std::string::npos) << mazes::imperfection(loop);
  Maze outer = m;
  outer.east[m.n - 1] = 1;
  EXPECT_NE(mazes::imperfection(outer).find("outer wall"), std::string::npos);
  Maze same = m;
  same.goal = same.start;
  EXPECT_NE(mazes::imperfection(same).find("same cell"), std::string::npos);
}

// The path is a chain of open passages from start to goal: its ends have one path neighbour,
// every other path cell two; the chain is the only path (the maze is perfect).
TEST(Mazes, SolveGivesTheChainFromStartToGoal) {
  for (const Maze& m : mazes::generate_many(21, 30, 5, 1)) {
    const std::vector<uint8_t> path = mazes::solve(m);
    ASSERT_TRUE(path[m.start] && path[m.goal]);
    int64_t on = 0;
    for (int64_t cell = 0; cell < m.cells(); ++cell) {
      if (!path[cell]) continue;
      ++on;
      int64_t along = 0;
      for (int64_t to : neighbours(m, cell)) along += path[to];
      EXPECT_EQ(along, cell == m.start || cell == m.goal ? 1 : 2) << "cell " << cell;
    }
    EXPECT_GE(on, 2);
  }
}

TEST(Mazes, TheSameMazesForAnyThreadCount) {
  // Enough mazes that both threads take some (a few hundred microseconds each).
  const auto one = mazes::generate_many(15, 2000, 9, 1), two = mazes::generate_many(15, 2000, 9, 2);
  expect_same_mazes(two, one);
  std::set<std::vector<uint8_t>> distinct;
  for (const Maze& m : one) distinct.insert(m.east);
  EXPECT_GT(distinct.size(), 1990u);
  // Maze i is the one of stream i of the seed, whichever thread made it.
  for (size_t i = 0; i < two.size(); ++i) {
    Random rng(Random::stream_seed(9, i));
    const Maze m = mazes::generate(15, rng);
    EXPECT_EQ(two[i].east, m.east) << i;
    EXPECT_EQ(two[i].start, m.start) << i;
  }
  EXPECT_NE(mazes::generate_many(15, 1, 10, 1)[0].east, one[0].east);
}

// Start and goal are uniform over the cells (make_mazes.py's np.random.choice of 2 of n^2): on
// 5 x 5 cells, each cell is the start of about 1/25 of 5,000 mazes.
TEST(Mazes, StartAndGoalAreUniform) {
  std::vector<int> starts(25, 0), goals(25, 0);
  for (const Maze& m : mazes::generate_many(9, 5000, 11, 2)) ++starts[m.start], ++goals[m.goal];
  for (int c = 0; c < 25; ++c) {
    EXPECT_NEAR(starts[c], 200, 60) << c;  // 200 +- 4.3 standard deviations
    EXPECT_NEAR(goals[c], 200, 60) << c;
  }
}

TEST(Mazes, EncodeGivesPassagesStartAndGoal) {
  Random rng(2);
  const Maze m = mazes::generate(11, rng);
  std::vector<float> f(m.cells() * mazes::kChannels);
  mazes::encode(m, f.data());
  for (int64_t cell = 0; cell < m.cells(); ++cell) {
    const float* x = &f[cell * mazes::kChannels];
    const std::vector<int64_t> nb = neighbours(m, cell);
    auto has = [&](int64_t to) { return std::find(nb.begin(), nb.end(), to) != nb.end() ? 1.0f : 0.0f; };
    EXPECT_EQ(x[0], has(cell + 1)) << cell;
    EXPECT_EQ(x[1], has(cell + m.n)) << cell;
    EXPECT_EQ(x[2], has(cell - 1)) << cell;
    EXPECT_EQ(x[3], has(cell - m.n)) << cell;
    EXPECT_EQ(x[4], cell == m.start ? 1.0f : 0.0f);
    EXPECT_EQ(x[5], cell == m.goal ? 1.0f : 0.0f);
  }
}

// --border B: each maze's n x n cells in the middle of an (n + 2B)-square grid, unchanged; the
// rings around them blocked cells (every feature 0) off the path. Checked position by position
// against the maze's own encoding and path, the border's rows and columns written out here.
TEST(Mazes, ABorderRingsEachMazeWithBlockedCells) {
  const Task& t = task("mazes");
  DataOptions d = t.default_data();
  d.task = "mazes", d.train_count = 3, d.seed = 4;
  const Examples plain = t.load(d, "train");
  d.border = 2;
  const Examples ringed = t.load(d, "train");
  const int64_t n = 5, side = 9, ch = mazes::kChannels;
  ASSERT_EQ(plain.positions, n * n);
  ASSERT_EQ(ringed.positions, side * side);
  ASSERT_EQ(ringed.count, 3);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t r = 0; r < side; ++r)
      for (int64_t c = 0; c < side; ++c) {
        const int64_t at = r * side + c;
        const bool inside = r >= 2 && r < 2 + n && c >= 2 && c < 2 + n;
        const int64_t cell = (r - 2) * n + (c - 2);
        for (int64_t k = 0; k < ch; ++k)
          EXPECT_EQ(ringed.inputs[(i * side * side + at) * ch + k], inside ? plain.inputs[(i * n * n + cell) * ch + k] : 0.0f)
              << i << " " << r << " " << c << " " << k;
        EXPECT_EQ(ringed.targets[i * side * side + at], inside ? plain.targets[i * n * n + cell] : 0) << i << " " << r << " " << c;
      }
  // Every maze cell has a passage: a blocked cell is never one of them.
  for (int64_t cell = 0; cell < n * n; ++cell) {
    float open = 0;
    for (int64_t k = 0; k < 4; ++k) open += plain.inputs[cell * ch + k];
    EXPECT_GT(open, 0.0f) << cell;
  }
  // The difficulty levels ring theirs too.
  const Difficulty levels = t.difficulty_levels(d, 1);
  EXPECT_EQ(levels.levels.front().examples.positions, side * side);
}

// The data set's pixel layout (make_mazes.py): cell (r, c) at rows and columns 4r + 3 .. 4r + 4,
// passages between, a black frame of 3 pixels; then the image back to the same maze and path.
TEST(Mazes, ImagesRoundTripInTheDataSetsLayout) {
  for (int64_t size : {3, 9, 13, 59}) {
    for (const Maze& m : mazes::generate_many(size, 5, 6, 1)) {
      const std::vector<uint8_t> path = mazes::solve(m);
      const mazes::Image img = mazes::to_image(m, path);
      const int64_t s = mazes::image_side(size);
      ASSERT_EQ(img.side, s);
      auto px = [&](int ch, int64_t y, int64_t x) { return img.rgb[(ch * s + y) * s + x]; };
      // The frame: rows and columns 0-2 and s-3 .. s-1 are black.
      for (int64_t i = 0; i < s; ++i)
        for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{2}, s - 3, s - 2, s - 1})
          for (int ch = 0; ch < 3; ++ch) ASSERT_EQ(px(ch, k, i) + px(ch, i, k), 0.0f);
      const int64_t sr = m.start / m.n, sc = m.start % m.n, gr = m.goal / m.n, gc = m.goal % m.n;
      for (int64_t dy : {0, 1})
        for (int64_t dx : {0, 1}) {
          EXPECT_EQ(px(0, 4 * sr + 3 + dy, 4 * sc + 3 + dx), 0.0f);  // green start
          EXPECT_EQ(px(1, 4 * sr + 3 + dy, 4 * sc + 3 + dx), 1.0f);
          EXPECT_EQ(px(0, 4 * gr + 3 + dy, 4 * gc + 3 + dx), 1.0f);  // red goal
          EXPECT_EQ(px(1, 4 * gr + 3 + dy, 4 * gc + 3 + dx), 0.0f);
          EXPECT_EQ(img.solution[(4 * sr + 3 + dy) * s + 4 * sc + 3 + dx], 1.0f);
        }
      // Posts between four cells are always black; a passage pixel is white exactly when open.
      for (int64_t r = 0; r + 1 < m.n; ++r)
        for (int64_t c = 0; c + 1 < m.n; ++c) {
          EXPECT_EQ(px(2, 4 * r + 5, 4 * c + 5), 0.0f);
          EXPECT_EQ(px(2, 4 * r + 3, 4 * c + 5), m.east[r * m.n + c] ? 1.0f : 0.0f);
          EXPECT_EQ(px(2, 4 * r + 5, 4 * c + 3), m.south[r * m.n + c] ? 1.0f : 0.0f);
        }
      std::vector<uint8_t> back_path;
      const Maze back = mazes::from_image(img.rgb.data(), img.solution.data(), s, &back_path);
      EXPECT_EQ(back.size, size);
      EXPECT_EQ(back.east, m.east);
      EXPECT_EQ(back.south, m.south);
      EXPECT_EQ(back.start, m.start);
      EXPECT_EQ(back.goal, m.goal);
      EXPECT_EQ(back_path, path);
    }
  }
}

TEST(Mazes, ABadImageNamesItsPixel) {
  Random rng(3);
  const Maze m = mazes::generate(9, rng);
  mazes::Image img = mazes::to_image(m, mazes::solve(m));
  const int64_t s = img.side;
  auto message = [&](const mazes::Image& i) {
    try {
      mazes::from_image(i.rgb.data(), i.solution.data(), i.side, nullptr);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  mazes::Image post = img;
  post.rgb[(2 * s + 5) * s + 5] = 1;  // blue at a post
  EXPECT_NE(message(post).find("pixel (5, 5) blue"), std::string::npos) << message(post);
  mazes::Image off_path = img;
  off_path.solution[1 * s + 1] = 1;
  EXPECT_NE(message(off_path).find("solution pixel (1, 1)"), std::string::npos) << message(off_path);
  mazes::Image no_start = img;
  const int64_t y = 4 * (m.start / m.n) + 3, x = 4 * (m.start % m.n) + 3;
  no_start.rgb[(0 * s + y) * s + x] = 1;  // green becomes white: no start left
  EXPECT_NE(message(no_start).find("no start"), std::string::npos) << message(no_start);
  EXPECT_THROW(mazes::from_image(img.rgb.data(), img.solution.data(), 25, nullptr), Error);
}

class MazesCsv : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("looplab_mazes_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                        "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  std::string error_of(const std::string& text) {
    const std::string f = (dir / "m.csv").string();
    write_file_atomic(f, text);
    try {
      mazes::read_csv(f);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir;
};

TEST_F(MazesCsv, RoundTrip) {
  const auto all = mazes::generate_many(13, 40, 8, 2);
  const std::string f = (dir / "m.csv").string();
  mazes::write_csv(f, all);
  const auto back = mazes::read_csv(f);
  expect_same_mazes(back, all);
}

TEST_F(MazesCsv, BadRowsNameFileLineAndField) {
  // A 2 x 2 maze (size 3): cells 0 1 / 2 3; passages 0-1 (east of 0), 0-2 (south of 0), 1-3
  // (south of 1): digits 3 2 0 0; from 0 to 3 the path is 0, 1, 3.
  const std::string head = "size,start,goal,passages,path\n";
  EXPECT_EQ(error_of(head + "3,0,3,3200,1101\n"), "");
  EXPECT_NE(error_of(head + "3,0,3,3200,1101\n4,0,3,3200,1101\n").find("m.csv:3: field 'size'"), std::string::npos);
  EXPECT_NE(error_of(head + "3,0,3,3300,1101\n").find("m.csv:2: field 'passages': not a perfect maze"), std::string::npos);
  EXPECT_NE(error_of(head + "3,0,3,3000,1101\n").find("m.csv:2: field 'passages': not a perfect maze"), std::string::npos);
  EXPECT_NE(error_of(head + "3,0,3,3270,1101\n").find("m.csv:2: field 'passages': digit 3 is '7'"), std::string::npos);
  EXPECT_NE(error_of(head + "3,0,3,320,1101\n").find("field 'passages': 3 digits"), std::string::npos);
  EXPECT_NE(error_of(head + "3,0,0,3200,1000\n").find("field 'start': not a perfect maze: start and goal are the same cell"),
            std::string::npos);
  EXPECT_NE(error_of(head + "3,0,3,3200,1011\n").find("m.csv:2: field 'path': cell 1 is on the path"), std::string::npos);
  EXPECT_NE(error_of(head + "3,0,x,3200,1101\n").find("field 'goal': 'x' is not an integer"), std::string::npos);
  EXPECT_NE(error_of(head).find("no mazes"), std::string::npos);
}

}  // namespace
}  // namespace looplab

namespace looplab {
namespace {

namespace fs = std::filesystem;
using mazes::Maze;

const std::string kDataSet = std::string(LOOPLAB_SOURCE_DIR) + "/tests/data/mazes";

// The data set's generator's own files (tests/data/mazes/README.md): float64 images that read as
// perfect mazes whose solution is the path, and whose pixels are looplab's image of them.
TEST(MazesDataSet, TheGeneratorsFilesRead) {
  for (const auto& [size, side] : {std::pair<int64_t, int64_t>{9, 24}, {13, 32}}) {
    const std::string folder = kDataSet + "/maze_data_test_" + std::to_string(size);
    const NpyArray raw = read_npy(folder + "/inputs.npy");
    EXPECT_EQ(raw.dtype, "<f8");
    EXPECT_EQ(raw.shape, (std::vector<int64_t>{4, 3, side, side}));
    const std::vector<Maze> all = mazes::read_data_set(folder);
    ASSERT_EQ(all.size(), 4u);
    for (size_t i = 0; i < all.size(); ++i) {
      EXPECT_EQ(all[i].size, size);
      EXPECT_EQ(mazes::imperfection(all[i]), "");
      const mazes::Image img = mazes::to_image(all[i], mazes::solve(all[i]));
      EXPECT_TRUE(std::equal(img.rgb.begin(), img.rgb.end(), raw.values.begin() + i * 3 * side * side)) << i;
    }
  }
}

class MazesFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("looplab_mazes_files_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                        "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::copy(kDataSet + "/maze_data_test_9", dir / "d");
  }
  void TearDown() override { fs::remove_all(dir); }
  std::string error_of(const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  std::string bytes(const std::string& f) { return read_file((dir / "d" / f).string()); }
  void put(const std::string& f, const std::string& b) { write_file_atomic((dir / "d" / f).string(), b); }
  std::string read_error() { return error_of([&] { mazes::read_data_set((dir / "d").string()); }); }
  fs::path dir;
};

TEST_F(MazesFiles, WrittenFilesReadBack) {
  const std::vector<Maze> all = mazes::generate_many(17, 6, 3, 1);
  mazes::write_data_set((dir / "w").string(), all);
  const NpyArray raw = read_npy((dir / "w" / "inputs.npy").string());
  EXPECT_EQ(raw.dtype, "<f4");
  EXPECT_EQ(raw.shape, (std::vector<int64_t>{6, 3, 40, 40}));
  const std::vector<Maze> back = mazes::read_data_set((dir / "w").string());
  expect_same_mazes(back, all);
}

TEST_F(MazesFiles, BadFilesNameTheFileAndWhat) {
  EXPECT_EQ(read_error(), "");
  const std::string inputs = bytes("inputs.npy"), solutions = bytes("solutions.npy");
  put("inputs.npy", inputs.substr(0, inputs.size() - 100));
  EXPECT_NE(read_error().find("inputs.npy: cut short"), std::string::npos) << read_error();
  put("inputs.npy", "not numpy at all, just text");
  EXPECT_NE(read_error().find("inputs.npy: not a .npy file"), std::string::npos) << read_error();
  std::string complex = inputs;
  complex.replace(complex.find("<f8"), 3, "<c8");
  put("inputs.npy", complex);
  EXPECT_NE(read_error().find("inputs.npy: dtype '<c8'"), std::string::npos) << read_error();
  // One pixel of maze 2 changed: a post (always black) made white in the blue channel.
  std::string pixel = inputs;
  const size_t data = inputs.size() - 4 * 3 * 24 * 24 * 8;
  const double one = 1.0;
  std::memcpy(&pixel[data + ((2 * 3 + 2) * 24 * 24 + 5 * 24 + 5) * 8], &one, 8);
  put("inputs.npy", pixel);
  EXPECT_NE(read_error().find("inputs.npy: maze 2 (and solutions.npy): pixel (5, 5) blue"), std::string::npos) << read_error();
  put("inputs.npy", inputs);
  put("solutions.npy", read_file(kDataSet + "/maze_data_test_13/solutions.npy"));
  EXPECT_NE(read_error().find("solutions.npy: shape [4, 32, 32], expected [4, 24, 24]"), std::string::npos) << read_error();
  fs::remove(dir / "d" / "solutions.npy");
  EXPECT_NE(read_error().find("solutions.npy: cannot open"), std::string::npos) << read_error();
}

}  // namespace
}  // namespace looplab
