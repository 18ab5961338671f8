#include "looplab/tasks/chess/puzzles.h"

#include <sstream>

#include "looplab/io/atomic_file.h"
#include "looplab/io/csv.h"
#include "looplab/util/error.h"

namespace looplab::chess {

Board orient(const Board& b, std::array<int, 64>* square_map) {
  std::array<int, 64> map;
  for (int sq = 0; sq < 64; ++sq) map[sq] = sq;
  Board o = b;
  if (b.side == kBlack) {
    for (int sq = 0; sq < 64; ++sq) {
      map[sq] = 63 - sq;  // rank r -> 7 - r and file f -> 7 - f
      const int p = b.squares[sq];
      o.squares[63 - sq] = static_cast<int8_t>(p == 0 ? 0 : make_piece(color_of(p) == kWhite ? kBlack : kWhite, type_of(p)));
    }
    o.side = kWhite;
    o.castling = ((b.castling & (kBlackShort | kBlackLong)) >> 2) | ((b.castling & (kWhiteShort | kWhiteLong)) << 2);
    o.en_passant = b.en_passant < 0 ? -1 : 63 - b.en_passant;
  }
  int king = 0;
  while (o.squares[king] != make_piece(kWhite, kKing)) ++king;
  if (file_of(king) < 4) {
    Board m = o;
    for (int sq = 0; sq < 64; ++sq) m.squares[sq ^ 7] = o.squares[sq];  // file f -> 7 - f
    for (int& t : map) t ^= 7;
    m.en_passant = o.en_passant < 0 ? -1 : o.en_passant ^ 7;
    o = m;
  }
  if (square_map) *square_map = map;
  return o;
}

bool to_example(const PuzzleRow& row, Example& out, std::string& why) {
  Board b;
  if (!parse_fen(row.fen, b, why)) {
    why = "field 'FEN': " + why;
    return false;
  }
  std::istringstream in(row.moves);
  std::string m0, m1;
  if (!(in >> m0 >> m1)) {
    why = "field 'Moves': '" + row.moves + "' needs at least two moves (the opponent's and the solution's)";
    return false;
  }
  Move first, second;
  if (!parse_uci(b, m0, first, why)) {
    why = "field 'Moves': first " + why;
    return false;
  }
  const Board after = make_move(b, first);
  if (!parse_uci(after, m1, second, why)) {
    why = "field 'Moves': second " + why;
    return false;
  }
  std::array<int, 64> map;
  const Board o = orient(after, &map);
  out.id = row.id;
  out.rating = row.rating;
  for (int sq = 0; sq < 64; ++sq) out.pieces[sq] = o.squares[sq];
  out.from = map[second.from];
  out.to = map[second.to];
  return true;
}

namespace {

bool parse_int(const std::string& s, int& out) {
  if (s.empty() || s.size() > 9) return false;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  int v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  out = s[0] == '-' ? -v : v;
  return true;
}

}  // namespace

ReadResult read_lichess(const std::string& path, const ReadOptions& options) {
  // Only the columns the model needs are required; the rest may be absent.
  CsvReader csv = CsvReader::open(path, {"PuzzleId", "FEN", "Moves", "Rating"});
  ReadResult r;
  while (csv.next()) {
    std::string why;
    PuzzleRow row;
    Example e;
    if (csv.field_count() != csv.column_count()) {
      why = "expected " + std::to_string(csv.column_count()) + " fields, got " + std::to_string(csv.field_count());
    } else if (!parse_int(csv.field("Rating"), row.rating)) {
      why = "field 'Rating': '" + csv.field("Rating") + "' is not an integer";
    } else {
      row.id = csv.field("PuzzleId");
      row.fen = csv.field("FEN");
      row.moves = csv.field("Moves");
      if (row.rating < options.min_rating || row.rating > options.max_rating) {
        ++r.filtered;
        continue;
      }
      to_example(row, e, why);
    }
    if (!why.empty()) {
      if (!options.skip_bad) throw Error(csv.where() + ": " + why);
      ++r.skipped;
      continue;
    }
    r.examples.push_back(e);
    if (options.limit > 0 && static_cast<int64_t>(r.examples.size()) >= options.limit) break;
  }
  return r;
}

void write_lichess(const std::string& path, const std::vector<PuzzleRow>& rows) {
  std::string out;
  for (size_t i = 0; i < kLichessColumns.size(); ++i) out += (i ? "," : "") + kLichessColumns[i];
  out += "\n";
  for (const PuzzleRow& p : rows)
    out += p.id + "," + p.fen + "," + p.moves + "," + std::to_string(p.rating) + "," +
           std::to_string(p.rating_deviation) + "," + std::to_string(p.popularity) + "," + std::to_string(p.plays) +
           "," + p.themes + "," + p.game_url + "," + p.opening_tags + "\n";
  write_file_atomic(path, out);
}

}  // namespace looplab::chess
