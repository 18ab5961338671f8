// A sudoku grid as 81 digits in row-major order, 0 for a blank cell. Parsing, printing and
// the checks a solution must pass. No LibTorch here.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace looplab::sudoku {

using Grid = std::array<uint8_t, 81>;

inline int row_of(int cell) { return cell / 9; }
inline int col_of(int cell) { return cell % 9; }
inline int box_of(int cell) { return (cell / 27) * 3 + (cell % 9) / 3; }

// 81 characters, '1'-'9' for a digit and '.' or '0' for a blank. On failure returns false and
// sets `why` to a message naming the offending character.
bool parse_grid(const std::string& text, Grid& grid, std::string& why);
// Like parse_grid, but throws looplab::Error prefixed by `where`.
Grid parse_grid_or_throw(const std::string& text, const std::string& where);

std::string to_string(const Grid& grid, char blank = '.');
// Nine lines of nine digits with box separators, for a terminal.
std::string to_pretty(const Grid& grid);

int clue_count(const Grid& grid);
// True when no row, column or box holds a digit twice (blanks allowed).
bool is_consistent(const Grid& grid, std::string* why = nullptr);
// True when `answer` is complete, consistent, and agrees with every clue of `question`.
bool is_solution_of(const Grid& question, const Grid& answer, std::string* why = nullptr);

}  // namespace looplab::sudoku
