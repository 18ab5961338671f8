// A sudoku solver of the kind that rates sudoku-extreme: bitmask candidates, constraint
// propagation with naked and hidden singles, and depth-first search that branches on the cell
// with the fewest candidates. It counts backtracks deterministically: a backtrack is a guess
// whose whole subtree held no solution and so had to be undone. No LibTorch here.
#pragma once

#include <cstdint>

#include "looplab/tasks/sudoku/grid.h"

namespace looplab {
class Random;
}

namespace looplab::sudoku {

struct SolveResult {
  int solutions = 0;       // found, at most the limit
  Grid solution{};         // the first one found (zeros when there is none)
  int64_t backtracks = 0;  // guesses undone
  int64_t guesses = 0;     // guesses made
};

// Searches until `limit` solutions are found or the tree is exhausted; limit 2 checks
// uniqueness. Digits are tried in ascending order, or in an order drawn from `shuffle` when it
// is given (to make random complete grids). An inconsistent grid has no solutions.
SolveResult solve(const Grid& puzzle, int limit = 2, Random* shuffle = nullptr);

// The difficulty rating: backtracks of a full search that finds the solution and proves it
// unique (limit 2), so the count does not depend on how early the solution lies in the tree.
int64_t rating(const Grid& puzzle);

}  // namespace looplab::sudoku
