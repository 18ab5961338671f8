// Sudoku puzzles in the sudoku-extreme CSV format (header source,question,answer,rating; grids
// of 81 characters with '.' or '0' for a blank; rating = solver backtracks) and the paper's
// split by rating. No LibTorch here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "looplab/tasks/sudoku/generator.h"

namespace looplab::sudoku {

struct Dataset {
  std::vector<Puzzle> puzzles;
  int64_t skipped = 0;  // bad rows passed over with skip_bad
};

// Validates every row: the field count, 81 allowed characters in question and answer, an
// answer that is complete, valid and agrees with the question's clues, and a rating that is a
// non-negative integer. A bad row is a looplab::Error "FILE:LINE: reason", or with `skip_bad`
// is counted in `skipped` and left out.
Dataset read_csv(const std::string& path, bool skip_bad = false);
void write_csv(const std::string& path, const std::vector<Puzzle>& puzzles);

// The paper's rule (B.1.1): the cut is the 80th percentile of the ratings (nearest rank:
// the ceil(0.8 n)-th smallest). Easy puzzles are rated below the cut, hard ones at or above it,
// so no puzzle is lost to a tie at the cut.
struct RatingSplit {
  int64_t cut = 0;
  std::vector<int64_t> easy, hard;  // indices into the puzzles, in file order
};
RatingSplit split_by_rating(const std::vector<Puzzle>& puzzles, double percentile = 0.8);

// A printable summary: count, clues, rating percentiles 50/80/95/99, the cut, the easy and hard
// bands' sizes and median ratings and their ratio, and the puzzles per source.
std::string rating_report(const std::vector<Puzzle>& puzzles);

// Value at a percentile p in [0, 1] of `values` (nearest rank), for the reports.
int64_t percentile_of(std::vector<int64_t> values, double p);

// --- The two sudoku-extreme files (train.csv, test.csv), split as the paper's released code does
// (`sudoku_data.py`; SPEC section 3). looplab's own pools and a single data file keep the rule
// above (nearest rank, random draws from each band).

// Value at a percentile p in [0, 1] of `values`, interpolated linearly between the two nearest
// ranks: numpy's default (method 'linear'). With the values sorted, h = (n - 1) p and
// a[floor h] + (h - floor h) (a[floor h + 1] - a[floor h]), computed as numpy does.
double interpolated_percentile(std::vector<int64_t> values, double p);

// The interpolated percentile p of every rating of a sudoku-extreme CSV (plain or zstd,
// streamed). Only the field count and the rating of each row are read: a bad one is a
// looplab::Error "FILE:LINE: reason", or with `skip_bad` is left out.
double file_rating_percentile(const std::string& path, double p, bool skip_bad = false);

// The first `count` rows of a sudoku-extreme CSV, in file order, rated below `cut` (`below`) or
// at or above it (!below). The rows taken are checked as read_csv() checks them; the rows
// passed over only for their field count and rating. Returns fewer than `count` when the file
// has fewer; with `skip_bad`, bad rows are counted in `skipped` and left out.
Dataset first_rated(const std::string& path, int64_t count, double cut, bool below, bool skip_bad = false);

}  // namespace looplab::sudoku
