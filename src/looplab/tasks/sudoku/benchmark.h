// `looplab bench sudoku`: the sudoku code's own rates (no model): puzzle generation on every
// thread and on one (checked identical), and the solver's rate per rating band. No LibTorch.
#pragma once

#include <cstdint>

namespace looplab::sudoku {

// `count` puzzles (>= 10) of `seed` on `threads` threads (0: every core), a quarter of them on
// one; prints the rates and the rating report to stdout.
void run_benchmark(int64_t count, uint64_t seed, int threads);

}  // namespace looplab::sudoku
