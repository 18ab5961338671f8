#include "looplab/tasks/sudoku/grid.h"

#include "looplab/util/error.h"

namespace looplab::sudoku {

bool parse_grid(const std::string& text, Grid& grid, std::string& why) {
  if (text.size() != 81) {
    why = "expected 81 characters, got " + std::to_string(text.size());
    return false;
  }
  for (int i = 0; i < 81; ++i) {
    const char c = text[i];
    if (c == '.' || c == '0') {
      grid[i] = 0;
    } else if (c >= '1' && c <= '9') {
      grid[i] = static_cast<uint8_t>(c - '0');
    } else {
      why = "character " + std::to_string(i + 1) + " is '" + std::string(1, c) + "' (expected 1-9, '.' or '0')";
      return false;
    }
  }
  return true;
}

Grid parse_grid_or_throw(const std::string& text, const std::string& where) {
  Grid g{};
  std::string why;
  if (!parse_grid(text, g, why)) throw Error(where + ": " + why);
  return g;
}

std::string to_string(const Grid& grid, char blank) {
  std::string s(81, blank);
  for (int i = 0; i < 81; ++i)
    if (grid[i]) s[i] = static_cast<char>('0' + grid[i]);
  return s;
}

std::string to_pretty(const Grid& grid) {
  std::string out;
  for (int r = 0; r < 9; ++r) {
    if (r == 3 || r == 6) out += "------+-------+------\n";
    for (int c = 0; c < 9; ++c) {
      if (c == 3 || c == 6) out += "| ";
      out += grid[r * 9 + c] ? static_cast<char>('0' + grid[r * 9 + c]) : '.';
      out += c == 8 ? "\n" : " ";
    }
  }
  return out;
}

int clue_count(const Grid& grid) {
  int n = 0;
  for (uint8_t d : grid) n += d != 0;
  return n;
}

bool is_consistent(const Grid& grid, std::string* why) {
  static const char* kUnit[] = {"row", "column", "box"};
  uint16_t seen[3][9] = {};
  for (int i = 0; i < 81; ++i) {
    const int d = grid[i];
    if (d == 0) continue;
    if (d > 9) {
      if (why) *why = "cell " + std::to_string(i + 1) + " holds " + std::to_string(d);
      return false;
    }
    const int unit[3] = {row_of(i), col_of(i), box_of(i)};
    for (int u = 0; u < 3; ++u) {
      const uint16_t bit = static_cast<uint16_t>(1u << d);
      if (seen[u][unit[u]] & bit) {
        if (why) *why = "digit " + std::to_string(d) + " appears twice in " + kUnit[u] + " " + std::to_string(unit[u] + 1);
        return false;
      }
      seen[u][unit[u]] |= bit;
    }
  }
  return true;
}

bool is_solution_of(const Grid& question, const Grid& answer, std::string* why) {
  for (int i = 0; i < 81; ++i)
    if (answer[i] == 0) {
      if (why) *why = "answer is incomplete (cell " + std::to_string(i + 1) + " is blank)";
      return false;
    }
  std::string reason;
  if (!is_consistent(answer, &reason)) {
    if (why) *why = "answer is not a valid grid: " + reason;
    return false;
  }
  for (int i = 0; i < 81; ++i)
    if (question[i] != 0 && question[i] != answer[i]) {
      if (why)
        *why = "answer disagrees with the clue at cell " + std::to_string(i + 1) + " (row " +
               std::to_string(row_of(i) + 1) + ", column " + std::to_string(col_of(i) + 1) + "): " +
               std::to_string(question[i]) + " vs " + std::to_string(answer[i]);
      return false;
    }
  return true;
}

}  // namespace looplab::sudoku
