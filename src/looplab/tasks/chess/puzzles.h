// Chess puzzles in the Lichess puzzle-database format and their encoding for the model
// (SPEC section 3): the FEN is the position before the opponent's move Moves[0]; the move to
// predict is Moves[1]. No LibTorch here.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "looplab/tasks/chess/board.h"

namespace looplab::chess {

inline const std::vector<std::string> kLichessColumns = {"PuzzleId", "FEN",     "Moves",   "Rating",  "RatingDeviation",
                                                         "Popularity", "NbPlays", "Themes", "GameUrl", "OpeningTags"};

// One row of the database, as written.
struct PuzzleRow {
  std::string id, fen, moves;  // moves: UCI, space-separated
  int rating = 0, rating_deviation = 0, popularity = 0, plays = 0;
  std::string themes, game_url, opening_tags;
};

// What the model sees: the position after Moves[0], oriented so that the side to move plays
// "up" as white with its king on files e-h, as 12 piece planes; and the solution's squares in
// the same orientation. Indexed by board square (a1 = 0); the encoder lays them out on the
// grid with grid_cell().
struct Example {
  std::string id;
  int rating = 0;
  std::array<int8_t, 64> pieces{};  // oriented board: 0 empty, 1-6 own P N B R Q K, 9-14 the opponent's
  int from = 0, to = 0;             // oriented squares of Moves[1]
};

// The model's grid cell (row-major, 0..63) of a square: grid row 0 = rank 8, row = 7 - rank,
// column = file, as the paper's released code (`chess_data.py`) lays out its planes. Squares
// count from a1 and cells from a8, so cell = square ^ 56, and the map is its own inverse.
inline int grid_cell(int square) { return (7 - rank_of(square)) * 8 + file_of(square); }
inline int square_of_cell(int cell) { return grid_cell(cell); }

// The orientation of SPEC section 3: if black is to move, rotate the board by 180 degrees (flip
// ranks and files) and swap the colours; then mirror the files if the king of the side to move
// stands on files a-d. Returns the oriented board and a map from original to oriented squares.
Board orient(const Board& board, std::array<int, 64>* square_map = nullptr);

// Applies Moves[0], reads Moves[1], orients. On a bad row returns false with `why`.
bool to_example(const PuzzleRow& row, Example& out, std::string& why);

struct ReadOptions {
  int min_rating = 0, max_rating = 1 << 30;  // keep min <= rating <= max
  bool skip_bad = false;
  int64_t limit = 0;  // stop after this many kept examples (0: all)
};
struct ReadResult {
  std::vector<Example> examples;
  int64_t skipped = 0, filtered = 0;  // bad rows skipped, rows outside the rating range
};
// A Lichess CSV, plain or zstd-compressed, streamed. A bad row (missing field, illegal FEN,
// malformed or illegal move, bad number) is a looplab::Error "FILE:LINE: reason", or with
// skip_bad is counted and left out.
ReadResult read_lichess(const std::string& path, const ReadOptions& options);

void write_lichess(const std::string& path, const std::vector<PuzzleRow>& rows);

}  // namespace looplab::chess
