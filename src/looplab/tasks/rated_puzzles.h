// What the two puzzle tasks (sudoku, chess) share: split sizes and the cpu preset of a
// full-attention 2-D task, train, val and hard from the easy and hard bands of one rated file,
// and random one-hot inputs for benchmarks.
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "looplab/tasks/task.h"
#include "looplab/util/error.h"
#include "looplab/util/numeric.h"
#include "looplab/util/random.h"

namespace looplab {

// SPEC section 3's sizes: 40,000 / 10,000 / 10,000.
inline DataOptions puzzle_data(DataOptions d) {
  d.train_count = 40000, d.val_count = 10000, d.hard_count = 10000;
  return d;
}

// The cpu preset: 64-81 tokens with full attention cost ~3x a prefix-sums example, so a smaller
// set, batch 100, width 128 (docs/presets.md, sudoku experiments 1-2).
inline Preset puzzle_preset(Preset p, const std::string& name) {
  if (name == "cpu") {
    p.width = 128, p.heads = 4;
    p.train_count = 4000, p.val_count = 1000, p.hard_count = 1000;
    p.batch = 100, p.epochs = 25, p.cooldown_epoch = 20;
  }
  return p;
}

// 0, 1, ..., n - 1: every example of a file.
inline std::vector<int64_t> all_of(size_t n) {
  std::vector<int64_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<int64_t>(i);
  return v;
}

// Train, val and hard from the bands of one rated file: a fixed shuffle of each band with the
// data seed, train first and val after it in the easy band, so the splits never overlap
// whatever the counts. The indices (into `band`) of the split's examples. `band_name` describes the band in the
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

// `eval --scaling` for a rated task: for each band [lo, hi] of ratings (both ends included), the
// first `count` examples rated in it, in file order, that `used` (train and val) leaves out.
// A band with no such example is left out. `median` is the median rating of the picks (the mean
// of the middle two for an even count).
struct RatedLevel {
  std::string label;  // "rating LO-HI", or "rating LO or more" for the open last band
  std::vector<int64_t> picks;
  double median = 0;
};
inline std::vector<RatedLevel> rated_levels(const std::vector<int64_t>& ratings, const std::vector<bool>& used,
                                            const std::vector<std::pair<int64_t, int64_t>>& bands, int64_t count) {
  std::vector<RatedLevel> levels;
  for (const auto& [lo, hi] : bands) {
    if (lo > hi) continue;  // a band emptied by ties between percentiles
    RatedLevel level;
    level.label = "rating " + std::to_string(lo) + (hi == INT64_MAX ? " or more" : "-" + std::to_string(hi));
    std::vector<int64_t> rated;
    for (size_t i = 0; i < ratings.size() && static_cast<int64_t>(level.picks.size()) < count; ++i)
      if (!used[i] && ratings[i] >= lo && ratings[i] <= hi) {
        level.picks.push_back(static_cast<int64_t>(i));
        rated.push_back(ratings[i]);
      }
    if (rated.empty()) continue;
    level.median = median(std::move(rated));
    levels.push_back(std::move(level));
  }
  return levels;
}

// `count` examples of one random class of `channels` per position (one-hot), targets of
// `classes` classes: inputs of the right form for benchmarks.
inline Examples random_one_hot(int64_t count, int64_t positions, int64_t channels, int64_t classes, uint64_t seed) {
  Random rng(seed);
  Examples e;
  e.resize(count, positions, channels);
  for (int64_t i = 0; i < count; ++i)
    for (int64_t c = 0; c < positions; ++c) {
      e.input(i)[c * channels + rng.uniform_int(0, channels - 1)] = 1;
      e.target(i)[c] = rng.uniform_int(0, classes - 1);
    }
  return e;
}

}  // namespace looplab
