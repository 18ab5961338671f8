#include "looplab/tasks/mazes/maze.h"

#include <array>
#include <cstdio>
#include <filesystem>

#include "looplab/io/atomic_file.h"
#include "looplab/io/csv.h"
#include "looplab/io/npy.h"
#include "looplab/util/error.h"
#include "looplab/util/parallel.h"
#include "looplab/util/random.h"

namespace looplab::mazes {

namespace {

// The four unit steps, in make_mazes.py's order of neighbours: west, east, south, north.
constexpr std::array<std::array<int, 2>, 4> kSteps = {{{0, -1}, {0, 1}, {1, 0}, {-1, 0}}};

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string t = "[";
  for (size_t i = 0; i < shape.size(); ++i) t += (i ? ", " : "") + std::to_string(shape[i]);
  return t + "]";
}

}  // namespace

int64_t cells_per_side(int64_t size) {
  if (size < 3 || size % 2 == 0)
    throw Error("mazes: size " + std::to_string(size) + " is not one of the data set's (odd, at least 3: 9, 11, ..., 59, 201)");
  return (size + 1) / 2;
}

int64_t image_side(int64_t size) { return 2 * size + 6; }

bool Maze::open(int64_t cell, int dr, int dc) const {
  const int64_t r = cell / n, c = cell % n;
  if (dr == 0 && dc == 1) return east[cell] != 0;
  if (dr == 1 && dc == 0) return south[cell] != 0;
  if (dr == 0 && dc == -1) return c > 0 && east[cell - 1] != 0;
  if (dr == -1 && dc == 0) return r > 0 && south[cell - n] != 0;
  return false;
}

Maze generate(int64_t size, Random& rng) {
  Maze m;
  m.size = size;
  m.n = cells_per_side(size);
  const int64_t n = m.n, cells = n * n;
  m.east.assign(cells, 0);
  m.south.assign(cells, 0);
  m.start = rng.uniform_int(0, cells - 1);
  m.goal = rng.uniform_int(0, cells - 2);
  if (m.goal >= m.start) ++m.goal;  // uniform over the other cells
  std::vector<uint8_t> visited(cells, 0);
  std::vector<int64_t> stack = {m.start};
  visited[m.start] = 1;
  std::vector<int64_t> next;
  while (!stack.empty()) {
    const int64_t cell = stack.back(), r = cell / n, c = cell % n;
    next.clear();
    for (const auto& [dr, dc] : kSteps) {
      const int64_t rr = r + dr, cc = c + dc;
      if (rr >= 0 && rr < n && cc >= 0 && cc < n && !visited[rr * n + cc]) next.push_back(rr * n + cc);
    }
    if (next.empty()) {
      stack.pop_back();
      continue;
    }
    const int64_t to = next[rng.uniform_int(0, static_cast<int64_t>(next.size()) - 1)];
    // Knock down the wall between the two cells: it belongs to the western or northern one.
    if (to == cell + 1) m.east[cell] = 1;
    else if (to == cell - 1) m.east[to] = 1;
    else if (to == cell + n) m.south[cell] = 1;
    else m.south[to] = 1;
    visited[to] = 1;
    stack.push_back(to);
  }
  return m;
}

std::vector<Maze> generate_many(int64_t size, int64_t count, uint64_t seed, int threads) {
  cells_per_side(size);  // checks the size before any thread starts
  std::vector<Maze> out(static_cast<size_t>(count));
  for_each_index(count, threads, [&] {
    return [&](int64_t i) {
      Random rng(Random::stream_seed(seed, static_cast<uint64_t>(i)));
      out[i] = generate(size, rng);
    };
  });
  return out;
}

std::string imperfection(const Maze& m) {
  const int64_t n = m.n, cells = m.cells();
  if (n < 2) return "fewer than 2 cells per side";
  if (static_cast<int64_t>(m.east.size()) != cells || static_cast<int64_t>(m.south.size()) != cells)
    return "passages for " + std::to_string(m.east.size()) + " cells, expected " + std::to_string(cells);
  if (m.start < 0 || m.start >= cells || m.goal < 0 || m.goal >= cells)
    return "start or goal outside the maze's " + std::to_string(cells) + " cells";
  if (m.start == m.goal) return "start and goal are the same cell";
  int64_t passages = 0;
  for (int64_t cell = 0; cell < cells; ++cell) {
    if (m.east[cell] && cell % n == n - 1) return "cell " + std::to_string(cell) + " opens east through the outer wall";
    if (m.south[cell] && cell / n == n - 1) return "cell " + std::to_string(cell) + " opens south through the outer wall";
    passages += (m.east[cell] != 0) + (m.south[cell] != 0);
  }
  // A connected graph of V vertices and V - 1 edges is a tree: one path between any two cells.
  if (passages != cells - 1)
    return std::to_string(passages) + " open passages, a perfect maze of " + std::to_string(cells) + " cells has " +
           std::to_string(cells - 1);
  std::vector<uint8_t> seen(cells, 0);
  std::vector<int64_t> todo = {0};
  seen[0] = 1;
  int64_t reached = 1;
  while (!todo.empty()) {
    const int64_t cell = todo.back();
    todo.pop_back();
    for (const auto& [dr, dc] : kSteps)
      if (m.open(cell, dr, dc)) {
        const int64_t to = cell + dr * n + dc;
        if (!seen[to]) seen[to] = 1, ++reached, todo.push_back(to);
      }
  }
  if (reached != cells) return std::to_string(cells - reached) + " cells cannot be reached from the first";
  return "";
}

std::vector<uint8_t> solve(const Maze& m) {
  const int64_t n = m.n, cells = m.cells();
  // Breadth-first search from the start, then back from the goal along the parents.
  std::vector<int64_t> parent(cells, -1), queue = {m.start};
  parent[m.start] = m.start;
  for (size_t head = 0; head < queue.size(); ++head) {
    const int64_t cell = queue[head];
    for (const auto& [dr, dc] : kSteps)
      if (m.open(cell, dr, dc)) {
        const int64_t to = cell + dr * n + dc;
        if (parent[to] < 0) parent[to] = cell, queue.push_back(to);
      }
  }
  if (parent[m.goal] < 0) throw Error("mazes: the goal cannot be reached from the start");
  std::vector<uint8_t> path(cells, 0);
  for (int64_t cell = m.goal;; cell = parent[cell]) {
    path[cell] = 1;
    if (cell == m.start) break;
  }
  return path;
}

void encode(const Maze& m, float* out) {
  for (int64_t cell = 0; cell < m.cells(); ++cell) {
    float* f = out + cell * kChannels;
    f[0] = m.open(cell, 0, 1);
    f[1] = m.open(cell, 1, 0);
    f[2] = m.open(cell, 0, -1);
    f[3] = m.open(cell, -1, 0);
    f[4] = cell == m.start;
    f[5] = cell == m.goal;
  }
}

// ---- the data set's images -------------------------------------------------------------------

namespace {

// The pixel layout of make_mazes.py: its (2n + 1)-square grid (cell (r, c) at [2r + 1, 2c + 1],
// its east passage at [2r + 1, 2c + 2], its south one at [2r + 2, 2c + 1]) with every pixel
// doubled and a 1-pixel border: grid position g covers pixels 2g + 1 and 2g + 2.
struct Layout {
  int64_t n, side;
  // What the grid position (gr, gc) is: a cell, a passage between two cells, or always a wall.
  enum Kind { kCell, kEast, kSouth, kWall };
  Kind kind(int64_t gr, int64_t gc) const {
    if (gr < 1 || gc < 1 || gr > 2 * n - 1 || gc > 2 * n - 1) return kWall;
    const bool odd_r = gr % 2 == 1, odd_c = gc % 2 == 1;
    if (odd_r && odd_c) return kCell;
    if (odd_r) return kEast;
    if (odd_c) return kSouth;
    return kWall;
  }
};

// The colour and path value of each grid position of a maze.
struct Pixel {
  float rgb[3];
  float path;
};

Pixel grid_pixel(const Maze& m, const std::vector<uint8_t>& path, int64_t gr, int64_t gc) {
  const Layout l{m.n, 0};
  const int64_t r = (gr - 1) / 2, c = (gc - 1) / 2, cell = r * m.n + c;
  switch (l.kind(gr, gc)) {
    case Layout::kCell:
      if (cell == m.start) return {{0, 1, 0}, static_cast<float>(path[cell])};
      if (cell == m.goal) return {{1, 0, 0}, static_cast<float>(path[cell])};
      return {{1, 1, 1}, static_cast<float>(path[cell])};
    case Layout::kEast:
      if (!m.east[cell]) return {{0, 0, 0}, 0};
      return {{1, 1, 1}, static_cast<float>(path[cell] && path[cell + 1])};
    case Layout::kSouth:
      if (!m.south[cell]) return {{0, 0, 0}, 0};
      return {{1, 1, 1}, static_cast<float>(path[cell] && path[cell + m.n])};
    case Layout::kWall:
      break;
  }
  return {{0, 0, 0}, 0};
}

}  // namespace

Image to_image(const Maze& m, const std::vector<uint8_t>& path) {
  Image img;
  img.side = image_side(m.size);
  const int64_t s = img.side;
  img.rgb.assign(3 * s * s, 0.0f);
  img.solution.assign(s * s, 0.0f);
  for (int64_t y = 1; y < s - 1; ++y)
    for (int64_t x = 1; x < s - 1; ++x) {
      const Pixel p = grid_pixel(m, path, (y - 1) / 2, (x - 1) / 2);
      for (int ch = 0; ch < 3; ++ch) img.rgb[(ch * s + y) * s + x] = p.rgb[ch];
      img.solution[y * s + x] = p.path;
    }
  return img;
}

Maze from_image(const float* rgb, const float* solution, int64_t side, std::vector<uint8_t>* path) {
  if (side < 12 || (side - 6) % 2 != 0 || ((side - 6) / 2) % 2 == 0)
    throw Error("an image of " + std::to_string(side) + " pixels is not a maze's (2 size + 6 for an odd size >= 3)");
  Maze m;
  m.size = (side - 6) / 2;
  m.n = cells_per_side(m.size);
  const int64_t n = m.n, s = side;
  m.east.assign(n * n, 0);
  m.south.assign(n * n, 0);
  m.start = m.goal = -1;
  std::vector<uint8_t> on(n * n, 0);
  auto at = [&](int ch, int64_t y, int64_t x) { return rgb[(ch * s + y) * s + x]; };
  // Read the cells and passages from the top-left pixel of each, then check every pixel.
  for (int64_t cell = 0; cell < n * n; ++cell) {
    const int64_t y = 4 * (cell / n) + 3, x = 4 * (cell % n) + 3;
    const float red = at(0, y, x), green = at(1, y, x);
    if (red == 0 && green == 1) {
      if (m.start >= 0) throw Error("two start cells (green), at pixels (" + std::to_string(4 * (m.start / n) + 3) + ", " +
                                    std::to_string(4 * (m.start % n) + 3) + ") and (" + std::to_string(y) + ", " +
                                    std::to_string(x) + ")");
      m.start = cell;
    } else if (red == 1 && green == 0) {
      if (m.goal >= 0) throw Error("two goal cells (red), the second at pixel (" + std::to_string(y) + ", " + std::to_string(x) + ")");
      m.goal = cell;
    }
    if (cell % n < n - 1) m.east[cell] = at(0, y, x + 2) != 0 || at(1, y, x + 2) != 0;
    if (cell / n < n - 1) m.south[cell] = at(0, y + 2, x) != 0 || at(1, y + 2, x) != 0;
    on[cell] = solution[y * s + x] != 0;
  }
  if (m.start < 0) throw Error("no start cell (green: 0 1 0)");
  if (m.goal < 0) throw Error("no goal cell (red: 1 0 0)");
  const Image want = to_image(m, on);
  static const char* kChannelNames[3] = {"red", "green", "blue"};
  for (int ch = 0; ch < 3; ++ch)
    for (int64_t i = 0; i < s * s; ++i)
      if (rgb[ch * s * s + i] != want.rgb[ch * s * s + i])
        throw Error("pixel (" + std::to_string(i / s) + ", " + std::to_string(i % s) + ") " + kChannelNames[ch] + " is " +
                    std::to_string(rgb[ch * s * s + i]) + ", a maze's image has " + std::to_string(want.rgb[ch * s * s + i]) +
                    " there");
  for (int64_t i = 0; i < s * s; ++i)
    if (solution[i] != want.solution[i])
      throw Error("solution pixel (" + std::to_string(i / s) + ", " + std::to_string(i % s) + ") is " +
                  std::to_string(solution[i]) + ", expected " + std::to_string(want.solution[i]) +
                  " (the path's cells and the passages between them)");
  if (path) *path = std::move(on);
  return m;
}

// ---- the data set's .npy files ---------------------------------------------------------------

std::vector<Maze> read_data_set(const std::string& folder) {
  const std::string in_path = (std::filesystem::path(folder) / "inputs.npy").string();
  const std::string sol_path = (std::filesystem::path(folder) / "solutions.npy").string();
  const NpyArray inputs = read_npy(in_path);
  const NpyArray solutions = read_npy(sol_path);
  const std::vector<int64_t>& s = inputs.shape;
  if (s.size() != 4 || s[1] != 3 || s[2] != s[3])
    throw Error(in_path + ": shape " + shape_text(s) + ", expected [N, 3, H, H] (the data set's mazes, channels first)");
  const std::vector<int64_t> want = {s[0], s[2], s[3]};
  if (solutions.shape != want)
    throw Error(sol_path + ": shape " + shape_text(solutions.shape) + ", expected " + shape_text(want) + " as " + in_path + "'s");
  const int64_t count = s[0], side = s[2];
  std::vector<Maze> out;
  out.reserve(count);
  for (int64_t i = 0; i < count; ++i) {
    const std::string where = in_path + ": maze " + std::to_string(i);
    std::vector<uint8_t> path;
    Maze m;
    try {
      m = from_image(inputs.values.data() + i * 3 * side * side, solutions.values.data() + i * side * side, side, &path);
    } catch (const Error& e) {
      throw Error(where + " (and solutions.npy): " + e.what());
    }
    const std::string why = imperfection(m);
    if (!why.empty()) throw Error(where + ": not a perfect maze: " + why);
    if (path != solve(m)) throw Error(sol_path + ": maze " + std::to_string(i) + ": not the path from start to goal");
    out.push_back(std::move(m));
  }
  if (out.empty()) throw Error(in_path + ": no mazes");
  return out;
}

void write_data_set(const std::string& folder, const std::vector<Maze>& mazes) {
  if (mazes.empty()) throw Error("mazes: no mazes to write to " + folder);
  const int64_t side = image_side(mazes.front().size), count = static_cast<int64_t>(mazes.size());
  std::vector<float> rgb, solution;
  rgb.reserve(count * 3 * side * side);
  solution.reserve(count * side * side);
  for (const Maze& m : mazes) {
    if (m.size != mazes.front().size) throw Error("mazes: one size per data set folder");
    const Image img = to_image(m, solve(m));
    rgb.insert(rgb.end(), img.rgb.begin(), img.rgb.end());
    solution.insert(solution.end(), img.solution.begin(), img.solution.end());
  }
  std::filesystem::create_directories(folder);
  write_npy((std::filesystem::path(folder) / "inputs.npy").string(), {count, 3, side, side}, rgb);
  write_npy((std::filesystem::path(folder) / "solutions.npy").string(), {count, side, side}, solution);
}

// ---- CSV -------------------------------------------------------------------------------------

void write_csv(const std::string& file, const std::vector<Maze>& mazes) {
  std::string out = "size,start,goal,passages,path\n";
  for (const Maze& m : mazes) {
    const std::vector<uint8_t> path = solve(m);
    out += std::to_string(m.size) + "," + std::to_string(m.start) + "," + std::to_string(m.goal) + ",";
    for (int64_t cell = 0; cell < m.cells(); ++cell) out += "0123"[m.east[cell] + 2 * m.south[cell]];
    out += ",";
    for (uint8_t b : path) out += b ? '1' : '0';
    out += "\n";
  }
  write_file_atomic(file, out);
}

std::vector<Maze> read_csv(const std::string& file) {
  CsvReader csv = CsvReader::open(file, {"size", "start", "goal", "passages", "path"});
  auto fail = [&](const std::string& field, const std::string& why) {
    return Error(csv.where() + ": field '" + field + "': " + why);
  };
  auto integer = [&](const std::string& field) {
    const std::string& t = csv.field(field);
    int64_t v = 0;
    if (t.empty() || t.size() > 18) throw fail(field, "'" + t + "' is not an integer");
    for (char ch : t) {
      if (ch < '0' || ch > '9') throw fail(field, "'" + t + "' is not an integer");
      v = 10 * v + (ch - '0');
    }
    return v;
  };
  std::vector<Maze> out;
  while (csv.next()) {
    if (csv.field_count() != csv.column_count())
      throw Error(csv.where() + ": " + std::to_string(csv.field_count()) + " fields, the header has " +
                  std::to_string(csv.column_count()));
    Maze m;
    m.size = integer("size");
    try {
      m.n = cells_per_side(m.size);
    } catch (const Error& e) {
      throw fail("size", e.what());
    }
    if (!out.empty() && m.size != out.front().size)
      throw fail("size", std::to_string(m.size) + ", earlier rows have " + std::to_string(out.front().size));
    m.start = integer("start");
    m.goal = integer("goal");
    const std::string& passages = csv.field("passages");
    if (static_cast<int64_t>(passages.size()) != m.cells())
      throw fail("passages", std::to_string(passages.size()) + " digits, a maze of size " + std::to_string(m.size) +
                                 " has " + std::to_string(m.cells()) + " cells");
    m.east.resize(m.cells());
    m.south.resize(m.cells());
    for (int64_t cell = 0; cell < m.cells(); ++cell) {
      const char ch = passages[cell];
      if (ch < '0' || ch > '3') throw fail("passages", "digit " + std::to_string(cell + 1) + " is '" + ch + "', expected 0-3");
      m.east[cell] = (ch - '0') & 1;
      m.south[cell] = ((ch - '0') >> 1) & 1;
    }
    const std::string why = imperfection(m);
    if (!why.empty()) throw fail(m.start == m.goal || m.start >= m.cells() || m.goal >= m.cells() ? "start" : "passages",
                                 "not a perfect maze: " + why);
    const std::vector<uint8_t> want = solve(m);
    const std::string& path = csv.field("path");
    if (static_cast<int64_t>(path.size()) != m.cells())
      throw fail("path", std::to_string(path.size()) + " digits, expected " + std::to_string(m.cells()));
    for (int64_t cell = 0; cell < m.cells(); ++cell) {
      if (path[cell] != '0' && path[cell] != '1')
        throw fail("path", "digit " + std::to_string(cell + 1) + " is '" + path[cell] + "', expected 0 or 1");
      if ((path[cell] == '1') != (want[cell] != 0))
        throw fail("path", "cell " + std::to_string(cell) + " is " + (want[cell] ? "" : "not ") +
                               "on the path from start to goal, the file says otherwise");
    }
    out.push_back(std::move(m));
  }
  if (out.empty()) throw Error(file + ": no mazes after the header");
  return out;
}

}  // namespace looplab::mazes
