#include "looplab/tasks/sudoku/dataset.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "looplab/io/atomic_file.h"
#include "looplab/io/csv.h"
#include "looplab/util/error.h"

namespace looplab::sudoku {

namespace {

bool parse_rating(const std::string& s, int64_t& out) {
  if (s.empty() || s.size() > 18) return false;
  out = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + (c - '0');
  }
  return true;
}

}  // namespace

Dataset read_csv(const std::string& path, bool skip_bad) {
  CsvReader csv(path, read_file(path), {"source", "question", "answer", "rating"});
  Dataset d;
  while (csv.next()) {
    std::string why;
    Puzzle row;
    if (csv.field_count() != csv.column_count()) {
      why = "expected " + std::to_string(csv.column_count()) + " fields, got " + std::to_string(csv.field_count());
    } else if (!parse_grid(csv.field("question"), row.question, why)) {
      why = "field 'question': " + why;
    } else if (!parse_grid(csv.field("answer"), row.answer, why)) {
      why = "field 'answer': " + why;
    } else if (!is_solution_of(row.question, row.answer, &why)) {
      why = "field 'answer': " + why;
    } else if (!parse_rating(csv.field("rating"), row.rating)) {
      why = "field 'rating': '" + csv.field("rating") + "' is not a non-negative integer";
    }
    if (!why.empty()) {
      if (!skip_bad) throw Error(csv.where() + ": " + why);
      ++d.skipped;
      continue;
    }
    row.source = csv.field("source");
    d.puzzles.push_back(std::move(row));
  }
  if (d.puzzles.empty()) throw Error(path + ": no puzzles after the header");
  return d;
}

void write_csv(const std::string& path, const std::vector<Puzzle>& puzzles) {
  std::string out = "source,question,answer,rating\n";
  out.reserve(out.size() + puzzles.size() * 190);
  for (const Puzzle& p : puzzles)
    out += p.source + "," + to_string(p.question) + "," + to_string(p.answer) + "," + std::to_string(p.rating) + "\n";
  write_file_atomic(path, out);
}

int64_t percentile_of(std::vector<int64_t> values, double p) {
  if (values.empty()) throw Error("percentile of an empty set");
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<size_t>(std::ceil(p * static_cast<double>(values.size())));
  return values[std::min(values.size(), std::max<size_t>(rank, 1)) - 1];
}

RatingSplit split_by_rating(const std::vector<Puzzle>& puzzles, double percentile) {
  std::vector<int64_t> ratings;
  for (const Puzzle& p : puzzles) ratings.push_back(p.rating);
  RatingSplit s;
  s.cut = percentile_of(ratings, percentile);
  for (size_t i = 0; i < puzzles.size(); ++i) (puzzles[i].rating < s.cut ? s.easy : s.hard).push_back(static_cast<int64_t>(i));
  return s;
}

std::string rating_report(const std::vector<Puzzle>& puzzles) {
  std::vector<int64_t> ratings, clues;
  std::map<std::string, int64_t> sources;
  for (const Puzzle& p : puzzles) {
    ratings.push_back(p.rating);
    clues.push_back(clue_count(p.question));
    ++sources[p.source];
  }
  const RatingSplit split = split_by_rating(puzzles);
  auto band_median = [&](const std::vector<int64_t>& idx) -> double {
    if (idx.empty()) return std::nan("");
    std::vector<int64_t> r;
    for (int64_t i : idx) r.push_back(ratings[i]);
    return static_cast<double>(percentile_of(r, 0.5));
  };
  const double easy = band_median(split.easy), hard = band_median(split.hard);
  char buf[512];
  std::string out;
  std::snprintf(buf, sizeof buf, "puzzles %zu, clues median %lld (min %lld, max %lld)\n", puzzles.size(),
                static_cast<long long>(percentile_of(clues, 0.5)), static_cast<long long>(percentile_of(clues, 0)),
                static_cast<long long>(percentile_of(clues, 1)));
  out += buf;
  std::snprintf(buf, sizeof buf, "rating (backtracks) percentiles: p50 %lld  p80 %lld  p95 %lld  p99 %lld  max %lld\n",
                static_cast<long long>(percentile_of(ratings, 0.5)), static_cast<long long>(percentile_of(ratings, 0.8)),
                static_cast<long long>(percentile_of(ratings, 0.95)), static_cast<long long>(percentile_of(ratings, 0.99)),
                static_cast<long long>(percentile_of(ratings, 1)));
  out += buf;
  std::snprintf(buf, sizeof buf,
                "split at the 80th percentile (%lld): easy (below) %zu, median %.0f; hard (at or above) %zu, median %.0f; "
                "hard/easy median ratio %s\n",
                static_cast<long long>(split.cut), split.easy.size(), easy, split.hard.size(), hard,
                easy > 0 ? (std::to_string(hard / easy).substr(0, 4) + "x").c_str() : "n/a (easy median 0)");
  out += buf;
  out += "sources:";
  for (const auto& [name, n] : sources) out += " " + name + " " + std::to_string(n);
  return out + "\n";
}

}  // namespace looplab::sudoku
