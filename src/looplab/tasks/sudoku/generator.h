// Sudoku puzzles from a seed, in the manner of sudoku-extreme: a random complete grid, clues
// removed in random order while the solution stays unique (which ends at a minimal puzzle),
// rated by the solver's backtracks. No LibTorch here.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "looplab/tasks/sudoku/grid.h"

namespace looplab {
class Random;
}

namespace looplab::sudoku {

struct Puzzle {
  Grid question{};
  Grid answer{};
  int64_t rating = 0;  // backtracks (solver.h)
  std::string source;  // where it comes from (the CSV's first column)
};

// Random minimal puzzles are mostly solved by propagation alone. Sudoku-extreme is a mixture of
// sources from easy to very hard; looplab imitates that with sources that differ in selection:
// a puzzle of selection k is the hardest (most backtracks) of k independent minimal puzzles.
struct Source {
  std::string name;
  int selection;  // >= 1
  int percent;    // share of the puzzles
};
// 50% plain minimal puzzles, 25% the hardest of 8, 25% the hardest of 64 (docs/sudoku.md has
// the measured spread: the hard band's median rating is several times the easy band's).
std::vector<Source> default_sources();

struct GeneratorOptions {
  std::vector<Source> sources = default_sources();  // percents must sum to 100
  int threads = 0;  // 0: all cores
};

// The hardest of `selection` minimal puzzles drawn from `rng`.
Puzzle select_puzzle(Random& rng, int selection);
// Puzzle `index` of the collection of `seed`: a pure function of (seed, index, sources).
Puzzle generate_puzzle(uint64_t seed, uint64_t index, const std::vector<Source>& sources);

// Puzzles 0..count-1 of `seed` on several threads; identical for any thread count.
// `progress(done, count)` is called from the calling thread a few times per second.
std::vector<Puzzle> generate(int64_t count, uint64_t seed, const GeneratorOptions& options,
                             const std::function<void(int64_t, int64_t)>& progress = {});

}  // namespace looplab::sudoku
