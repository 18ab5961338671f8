// The nearest name to a mistyped one, for "did you mean ...?" messages (the command line's,
// the sweep file's). Torch-free and CLI-free.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace looplab {

// Levenshtein edit distance (insertions, deletions, substitutions), where a transposition of
// two adjacent characters also counts as one edit (optimal string alignment distance).
size_t edit_distance(const std::string& a, const std::string& b);

// The candidate nearest to `word`, or "" when none is close enough. Close enough: edit distance
// <= max(1, word.size() / 3), or the only candidate that starts with `word`. Among the close
// ones the smallest distance wins; on a tie, the first in the candidates' order.
std::string nearest(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace looplab
