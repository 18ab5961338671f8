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

const std::vector<std::string> kColumns = {"source", "question", "answer", "rating"};

// Each check of a row: true, or false with `why`.
bool fields_ok(const CsvReader& csv, std::string& why) {
  if (csv.field_count() == csv.column_count()) return true;
  why = "expected " + std::to_string(csv.column_count()) + " fields, got " + std::to_string(csv.field_count());
  return false;
}

bool read_rating(const CsvReader& csv, int64_t& rating, std::string& why) {
  if (!parse_rating(csv.field("rating"), rating)) {
    why = "field 'rating': '" + csv.field("rating") + "' is not a non-negative integer";
    return false;
  }
  return true;
}

bool read_grids(const CsvReader& csv, Puzzle& row, std::string& why) {
  if (!parse_grid(csv.field("question"), row.question, why)) {
    why = "field 'question': " + why;
  } else if (!parse_grid(csv.field("answer"), row.answer, why)) {
    why = "field 'answer': " + why;
  } else if (!is_solution_of(row.question, row.answer, &why)) {
    why = "field 'answer': " + why;
  } else {
    row.source = csv.field("source");
    return true;
  }
  return false;
}

// A bad row: an error naming its file and line, or counted in `skipped` with skip_bad.
void bad_row(const CsvReader& csv, const std::string& why, bool skip_bad, int64_t& skipped) {
  if (!skip_bad) throw Error(csv.where() + ": " + why);
  ++skipped;
}

}  // namespace

Dataset read_csv(const std::string& path, bool skip_bad) {
  CsvReader csv(path, read_file(path), kColumns);
  Dataset d;
  while (csv.next()) {
    std::string why;
    Puzzle row;
    if (fields_ok(csv, why) && read_grids(csv, row, why) && read_rating(csv, row.rating, why))
      d.puzzles.push_back(std::move(row));
    else
      bad_row(csv, why, skip_bad, d.skipped);
  }
  if (d.puzzles.empty()) throw Error(path + ": no puzzles after the header");
  return d;
}

double interpolated_percentile(std::vector<int64_t> values, double p) {
  if (values.empty()) throw Error("percentile of an empty set");
  std::sort(values.begin(), values.end());
  const double h = static_cast<double>(values.size() - 1) * p;
  const double below = std::floor(h);
  const size_t lo = static_cast<size_t>(below), hi = std::min(lo + 1, values.size() - 1);
  const double a = static_cast<double>(values[lo]), b = static_cast<double>(values[hi]);
  const double gamma = h - below, diff = b - a;
  // numpy's _lerp: from the nearer end, so that gamma = 1 gives b exactly.
  return gamma >= 0.5 ? b - diff * (1 - gamma) : a + diff * gamma;
}

double file_rating_percentile(const std::string& path, double p, bool skip_bad) {
  CsvReader csv = CsvReader::open(path, kColumns);
  std::vector<int64_t> ratings;
  int64_t skipped = 0;
  while (csv.next()) {
    int64_t rating = 0;
    std::string why;
    if (fields_ok(csv, why) && read_rating(csv, rating, why)) ratings.push_back(rating);
    else bad_row(csv, why, skip_bad, skipped);
  }
  if (ratings.empty()) throw Error(path + ": no puzzles after the header");
  return interpolated_percentile(std::move(ratings), p);
}

Dataset first_rated(const std::string& path, int64_t count, double cut, bool below, bool skip_bad) {
  CsvReader csv = CsvReader::open(path, kColumns);
  Dataset d;
  while (static_cast<int64_t>(d.puzzles.size()) < count && csv.next()) {
    Puzzle row;
    std::string why;
    if (!fields_ok(csv, why) || !read_rating(csv, row.rating, why)) {
      bad_row(csv, why, skip_bad, d.skipped);
      continue;
    }
    if ((static_cast<double>(row.rating) < cut) != below) continue;
    if (!read_grids(csv, row, why)) {
      bad_row(csv, why, skip_bad, d.skipped);
      continue;
    }
    d.puzzles.push_back(std::move(row));
  }
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
