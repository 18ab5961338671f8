// Labelled chess puzzles made offline, in the Lichess format, the way Lichess makes its own
// from engine analysis (docs/chess.md): positions from varied self-play, kept where one move is
// clearly best, rated by the search depth from which that move is and stays the engine's
// choice. Reproducible for a seed (the engine searches to fixed depths with one thread and a
// cleared hash). No LibTorch here.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "looplab/tasks/chess/puzzles.h"

namespace looplab::chess {

class Engine;

struct ChessGeneratorOptions {
  std::string engine;  // path; empty: find_engine()
  int depth = 8;       // analysis depth of the candidate position
  int threads = 0;     // engine processes; 0: all cores
};

// The rating of a solution first found, and kept, at depth d: 1000 + 150 (d - 1), so depths
// 1-5 are the easy band (<= 1600) and 6-7 the hard one (1750-1900) of SPEC's split by rating
// (train and val at most 1600, hard 1601-2000); depth 8 and more (2050+) fall outside both.
int rating_for_depth(int depth);

// Puzzle `index` of the collection of `seed` (a pure function of both and the options).
PuzzleRow generate_chess_puzzle(Engine& engine, uint64_t seed, uint64_t index, int depth);

std::vector<PuzzleRow> generate_chess(int64_t count, uint64_t seed, const ChessGeneratorOptions& options,
                                      const std::function<void(int64_t, int64_t)>& progress = {});

}  // namespace looplab::chess
