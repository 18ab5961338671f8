#include "looplab/util/nearest.h"

#include <algorithm>

namespace looplab {

size_t edit_distance(const std::string& a, const std::string& b) {
  // Optimal string alignment: Levenshtein plus adjacent transpositions, on a full table.
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1, 0));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

std::string nearest(const std::string& word, const std::vector<std::string>& candidates) {
  if (word.empty()) return "";
  const size_t limit = std::max<size_t>(1, word.size() / 3);
  const std::string* best = nullptr;
  size_t best_distance = 0;
  for (const auto& c : candidates) {
    const size_t d = edit_distance(word, c);
    if (d <= limit && (best == nullptr || d < best_distance)) {
      best = &c;
      best_distance = d;
    }
  }
  if (best != nullptr) return *best;
  // Nothing within the distance: a unique prefix (`--rec` for `--recompute`) still counts.
  const std::string* prefixed = nullptr;
  for (const auto& c : candidates) {
    if (c.compare(0, word.size(), word) != 0 || c.size() < word.size()) continue;
    if (prefixed != nullptr && *prefixed != c) return "";  // ambiguous
    prefixed = &c;
  }
  return prefixed != nullptr ? *prefixed : "";
}

}  // namespace looplab
