// Mazes, the easy-to-hard benchmark in two dimensions (Bansal et al. 2022; the data set
// `aks2203/easy-to-hard-data`, its make_mazes.py): a perfect maze (exactly one path between any
// two cells) made by randomized depth-first search, a start and a goal cell, and the target: the
// unique path between them. No LibTorch here.
//
// Sizes are the data set's names: a maze of size s (9 to train; 11, 13, ..., 59 and 201 to test)
// has n = (s + 1) / 2 cells per side, and its image is 2 s + 6 pixels square. The model sees one
// token per cell (n x n tokens: 25 for size 9, 900 for 59, 10,201 for 201) with its four
// passages, start and goal as input features (kChannels), and answers per cell: on the path or
// not. The image and the cells hold the same information (to_image and from_image convert
// exactly, tests/tasks/mazes_test.cpp round-trips them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace looplab {
class Random;
}

namespace looplab::mazes {

// Cells per side of a maze of `size` (the data set's name): (size + 1) / 2. Throws
// looplab::Error unless size is odd and at least 3 (two cells per side: room for a start and a
// distinct goal).
int64_t cells_per_side(int64_t size);
// The side in pixels of the data set's image of a maze of `size`: 2 size + 6.
int64_t image_side(int64_t size);

struct Maze {
  int64_t size = 0;  // the data set's size
  int64_t n = 0;     // cells per side; cell r * n + c is row r (down), column c (right)
  // [n * n]: 1 where the passage from the cell to its east (right) / south (lower) neighbour is
  // open. The last column's east and the last row's south are always 0 (the outer wall).
  std::vector<uint8_t> east, south;
  int64_t start = 0, goal = 0;  // distinct cells
  int64_t cells() const { return n * n; }
  // Whether the cell's passage toward (dr, dc), one of the four unit steps, is open.
  bool open(int64_t cell, int dr, int dc) const;
};

// A maze as make_mazes.py makes one: start and goal two distinct cells drawn uniformly, then the
// passages carved by randomized depth-first search from the start (each step to an unvisited
// neighbour drawn uniformly; back up when there is none).
Maze generate(int64_t size, Random& rng);
// `count` mazes of `size`; maze i from its own stream of `seed` (Random::stream_seed), so the
// result is the same for any thread count (0: every core).
std::vector<Maze> generate_many(int64_t size, int64_t count, uint64_t seed, int threads);

// "" when `m` is a perfect maze with a start and goal inside it (n * n - 1 open passages, all
// cells connected, no passage through the outer wall); otherwise why not.
std::string imperfection(const Maze& m);
// The cells of the path from start to goal (1 on it, start and goal included) [n * n]. Throws
// looplab::Error when the goal cannot be reached.
std::vector<uint8_t> solve(const Maze& m);

// The model's input features per cell, kChannels of them, each 0 or 1: the passages east,
// south, west and north open, the cell is the start, the cell is the goal.
inline constexpr int64_t kChannels = 6;
// Writes [n * n, kChannels] to `out`.
void encode(const Maze& m, float* out);

// The data set's image of a maze and its path (make_mazes.py, channels first):
//   rgb [3, H, H] with H = image_side(size): 1 1 1 on open pixels (cells and open passages),
//     0 1 0 (green) on the start cell, 1 0 0 (red) on the goal cell, 0 on walls, posts and the
//     border; cell (r, c) is the 2 x 2 block at rows 4r + 3 .. 4r + 4, columns 4c + 3 .. 4c + 4,
//     its east passage at columns 4c + 5 .. 4c + 6, its south passage at rows 4r + 5 .. 4r + 6;
//   solution [H, H]: 1 on the path's cells and on the passages between them, 0 elsewhere.
struct Image {
  int64_t side = 0;
  std::vector<float> rgb, solution;
};
Image to_image(const Maze& m, const std::vector<uint8_t>& path);
// The maze and path (per cell) of an image of `side` pixels (rgb [3, side, side], solution
// [side, side]). Every pixel must be what to_image would write for them; the first one that is
// not is a looplab::Error naming its channel, row and column and what it should be.
Maze from_image(const float* rgb, const float* solution, int64_t side, std::vector<uint8_t>* path);

// The data set's own files: FOLDER/inputs.npy [N, 3, H, H] and FOLDER/solutions.npy [N, H, H]
// (e.g. maze_data_test_59), any dtype io/npy.h reads. Every maze is checked as from_image checks
// it, and must be perfect with its solution the path from start to goal; the first that is not
// is a looplab::Error naming the file, the maze's index and what is wrong.
std::vector<Maze> read_data_set(const std::string& folder);
// Writes mazes in that form (float32), to FOLDER/inputs.npy and FOLDER/solutions.npy.
void write_data_set(const std::string& folder, const std::vector<Maze>& mazes);

// A CSV file of mazes: columns size,start,goal,passages,path; passages one hexadecimal digit
// per cell in row-major order (1: east open, 2: south open; west and north follow from the
// neighbours), path one 0/1 digit per cell.
void write_csv(const std::string& file, const std::vector<Maze>& mazes);
// Reads and checks every row: one size throughout, a perfect maze, start and goal inside it and
// distinct, the path the unique one. A bad row is a looplab::Error naming the file, line and
// field.
std::vector<Maze> read_csv(const std::string& file);

}  // namespace looplab::mazes
