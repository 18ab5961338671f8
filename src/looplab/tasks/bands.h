// Train, val and hard from the easy and hard bands of one rated file (sudoku by solver
// backtracks, chess by puzzle rating): a fixed shuffle of each band with the data seed, train
// first and val after it in the easy band, so the splits never overlap whatever the counts.
#pragma once

#include <string>
#include <vector>

#include "looplab/tasks/task.h"
#include "looplab/util/error.h"
#include "looplab/util/random.h"

namespace looplab {

// The indices (into `band`) of the split's examples. `band_name` describes the band in the
// error raised when it is too small, e.g. "easy puzzles (rating < 40)".
inline std::vector<int64_t> pick_from_band(const std::vector<int64_t>& band, const DataOptions& s,
                                           const std::string& split, const std::string& path,
                                           const std::string& band_name) {
  const bool hard = split == "hard";
  const int64_t count = s.count(split);
  const int64_t offset = split == "val" ? s.train_count : 0;
  if (offset + count > static_cast<int64_t>(band.size()))
    throw Error(path + ": " + std::to_string(band.size()) + " " + band_name + ", need " +
                (hard ? std::to_string(count) + " for hard"
                      : std::to_string(s.train_count) + " for train + " + std::to_string(s.val_count) + " for val"));
  Random rng(Random::stream_seed(s.seed, hard ? 2 : 1));
  const std::vector<int64_t> order = rng.permutation(static_cast<int64_t>(band.size()));
  std::vector<int64_t> pick;
  for (int64_t i = offset; i < offset + count; ++i) pick.push_back(band[order[i]]);
  return pick;
}

}  // namespace looplab
