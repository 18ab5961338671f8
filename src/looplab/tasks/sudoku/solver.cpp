#include "looplab/tasks/sudoku/solver.h"

#include <algorithm>

#include "looplab/util/random.h"

namespace looplab::sudoku {

namespace {

constexpr uint16_t kAll = 0x1FF;  // candidate bit d-1 for digit d

struct Units {
  int cells[27][9];  // rows 0-8, columns 9-17, boxes 18-26
  Units() {
    for (int i = 0; i < 81; ++i) {
      const int r = row_of(i), c = col_of(i), b = box_of(i);
      const int k = (r % 3) * 3 + c % 3;
      cells[r][c] = i;
      cells[9 + c][r] = i;
      cells[18 + b][k] = i;
    }
  }
};
const Units kUnits;

struct State {
  Grid cells{};
  uint16_t used[27] = {};  // digits placed per unit, indexed as Units
  int empty = 81;

  uint16_t candidates(int cell) const {
    return static_cast<uint16_t>(~(used[row_of(cell)] | used[9 + col_of(cell)] | used[18 + box_of(cell)]) & kAll);
  }
  void place(int cell, int digit) {
    const uint16_t bit = static_cast<uint16_t>(1u << (digit - 1));
    cells[cell] = static_cast<uint8_t>(digit);
    used[row_of(cell)] |= bit;
    used[9 + col_of(cell)] |= bit;
    used[18 + box_of(cell)] |= bit;
    --empty;
  }
};

int digit_of(uint16_t single_bit) { return __builtin_ctz(single_bit) + 1; }

// Naked and hidden singles until nothing changes; false on a contradiction.
bool propagate(State& s) {
  bool changed = true;
  while (changed && s.empty > 0) {
    changed = false;
    for (int i = 0; i < 81; ++i) {
      if (s.cells[i]) continue;
      const uint16_t c = s.candidates(i);
      if (c == 0) return false;
      if ((c & (c - 1)) == 0) {
        s.place(i, digit_of(c));
        changed = true;
      }
    }
    for (int u = 0; u < 27; ++u) {
      uint16_t once = 0, twice = 0;
      for (int cell : kUnits.cells[u]) {
        if (s.cells[cell]) continue;
        const uint16_t c = s.candidates(cell);
        twice |= once & c;
        once |= c;
      }
      if ((once | s.used[u]) != kAll) return false;  // a digit has no place left in this unit
      uint16_t hidden = once & ~twice & ~s.used[u];
      while (hidden) {
        const uint16_t bit = hidden & -hidden;
        hidden &= hidden - 1;
        if (s.used[u] & bit) continue;
        int where = -1;
        for (int cell : kUnits.cells[u])
          if (!s.cells[cell] && (s.candidates(cell) & bit)) where = cell;
        if (where < 0) return false;  // an earlier placement took its only cell
        s.place(where, digit_of(bit));
        changed = true;
      }
    }
  }
  return true;
}

struct Search {
  int limit;
  Random* shuffle;
  SolveResult result;

  void run(State s) {
    if (!propagate(s)) return;
    if (s.empty == 0) {
      if (result.solutions++ == 0) result.solution = s.cells;
      return;
    }
    int best = -1, best_count = 10;
    for (int i = 0; i < 81 && best_count > 2; ++i) {
      if (s.cells[i]) continue;
      const int n = __builtin_popcount(s.candidates(i));
      if (n < best_count) best = i, best_count = n;
    }
    int digits[9], n = 0;
    for (uint16_t c = s.candidates(best); c; c &= c - 1) digits[n++] = digit_of(c & -c);
    if (shuffle)
      for (int i = n - 1; i > 0; --i) std::swap(digits[i], digits[shuffle->uniform_int(0, i)]);
    for (int k = 0; k < n && result.solutions < limit; ++k) {
      State next = s;
      next.place(best, digits[k]);
      const int before = result.solutions;
      ++result.guesses;
      run(next);
      if (result.solutions == before) ++result.backtracks;
    }
  }
};

}  // namespace

SolveResult solve(const Grid& puzzle, int limit, Random* shuffle) {
  Search search{limit, shuffle, {}};
  State s;
  for (int i = 0; i < 81; ++i) {
    const int d = puzzle[i];
    if (d == 0) continue;
    if (d > 9 || !(s.candidates(i) & (1u << (d - 1)))) return search.result;  // clues clash
    s.place(i, d);
  }
  search.run(s);
  return search.result;
}

int64_t rating(const Grid& puzzle) { return solve(puzzle, 2).backtracks; }

}  // namespace looplab::sudoku
