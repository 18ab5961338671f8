#include "looplab/tasks/chess/board.h"

#include <cstdlib>
#include <cstring>
#include <sstream>

#include "looplab/util/error.h"

namespace looplab::chess {

namespace {

const char kPieceChars[] = " PNBRQK  pnbrqk";

struct Step {
  int df, dr;
};
constexpr Step kKnightSteps[] = {{1, 2}, {2, 1}, {2, -1}, {1, -2}, {-1, -2}, {-2, -1}, {-2, 1}, {-1, 2}};
constexpr Step kKingSteps[] = {{1, 0}, {1, 1}, {0, 1}, {-1, 1}, {-1, 0}, {-1, -1}, {0, -1}, {1, -1}};
constexpr Step kDiagonal[] = {{1, 1}, {-1, 1}, {-1, -1}, {1, -1}};
constexpr Step kStraight[] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}};

// The square one step away, or -1 off the board.
int step(int sq, Step s) {
  const int f = file_of(sq) + s.df, r = rank_of(sq) + s.dr;
  return (f < 0 || f > 7 || r < 0 || r > 7) ? -1 : f + 8 * r;
}

bool slider_attacks(const Board& b, int sq, const Step (&dirs)[4], int piece_a, int piece_b) {
  for (Step d : dirs)
    for (int t = step(sq, d); t >= 0; t = step(t, d)) {
      const int p = b.squares[t];
      if (p == 0) continue;
      if (p == piece_a || p == piece_b) return true;
      break;
    }
  return false;
}

void add_pawn_move(std::vector<Move>& out, int from, int to) {
  if (rank_of(to) == 7 || rank_of(to) == 0) {
    for (PieceType t : {kQueen, kRook, kBishop, kKnight})
      out.push_back({static_cast<int8_t>(from), static_cast<int8_t>(to), t});
  } else {
    out.push_back({static_cast<int8_t>(from), static_cast<int8_t>(to), kNone});
  }
}

// Moves that follow the pieces' rules, ignoring whether the own king is left in check.
std::vector<Move> pseudo_legal(const Board& b) {
  std::vector<Move> out;
  out.reserve(64);
  const Color us = b.side, them = us == kWhite ? kBlack : kWhite;
  auto own = [&](int p) { return p != 0 && color_of(p) == us; };
  auto add = [&](int from, int to) { out.push_back({static_cast<int8_t>(from), static_cast<int8_t>(to), kNone}); };
  for (int sq = 0; sq < 64; ++sq) {
    const int p = b.squares[sq];
    if (!own(p)) continue;
    switch (type_of(p)) {
      case kPawn: {
        const int dir = us == kWhite ? 1 : -1, start = us == kWhite ? 1 : 6;
        const int one = step(sq, {0, dir});
        if (one >= 0 && b.squares[one] == 0) {
          add_pawn_move(out, sq, one);
          const int two = step(one, {0, dir});
          if (rank_of(sq) == start && b.squares[two] == 0) add(sq, two);
        }
        for (int df : {-1, 1}) {
          const int t = step(sq, {df, dir});
          if (t < 0) continue;
          if (b.squares[t] != 0 && color_of(b.squares[t]) == them) add_pawn_move(out, sq, t);
          else if (t == b.en_passant) add(sq, t);
        }
        break;
      }
      case kKnight:
        for (Step s : kKnightSteps)
          if (int t = step(sq, s); t >= 0 && !own(b.squares[t])) add(sq, t);
        break;
      case kKing:
        for (Step s : kKingSteps)
          if (int t = step(sq, s); t >= 0 && !own(b.squares[t])) add(sq, t);
        break;
      default: {
        const PieceType t = type_of(p);
        auto slide = [&](const Step(&dirs)[4]) {
          for (Step d : dirs)
            for (int to = step(sq, d); to >= 0; to = step(to, d)) {
              if (own(b.squares[to])) break;
              add(sq, to);
              if (b.squares[to] != 0) break;
            }
        };
        if (t == kBishop || t == kQueen) slide(kDiagonal);
        if (t == kRook || t == kQueen) slide(kStraight);
      }
    }
  }
  // Castling: rights, empty squares between, and king not in, through or into check (the
  // last is checked with the other moves).
  const int home = us == kWhite ? 0 : 56;
  const int king = make_piece(us, kKing), rook = make_piece(us, kRook);
  if (b.squares[home + 4] == king) {
    const int short_right = us == kWhite ? kWhiteShort : kBlackShort, long_right = us == kWhite ? kWhiteLong : kBlackLong;
    if ((b.castling & short_right) && b.squares[home + 7] == rook && !b.squares[home + 5] && !b.squares[home + 6] &&
        !is_attacked(b, home + 4, them) && !is_attacked(b, home + 5, them))
      add(home + 4, home + 6);
    if ((b.castling & long_right) && b.squares[home] == rook && !b.squares[home + 1] && !b.squares[home + 2] &&
        !b.squares[home + 3] && !is_attacked(b, home + 4, them) && !is_attacked(b, home + 3, them))
      add(home + 4, home + 2);
  }
  return out;
}

int king_square(const Board& b, Color c) {
  const int king = make_piece(c, kKing);
  for (int sq = 0; sq < 64; ++sq)
    if (b.squares[sq] == king) return sq;
  return -1;
}

}  // namespace

std::string square_name(int sq) { return {static_cast<char>('a' + file_of(sq)), static_cast<char>('1' + rank_of(sq))}; }

std::string to_uci(const Move& m) {
  std::string s = square_name(m.from) + square_name(m.to);
  if (m.promotion != kNone) s += " pnbrqk"[m.promotion];
  return s;
}

bool is_attacked(const Board& b, int sq, Color by) {
  const int pawn_dir = by == kWhite ? -1 : 1;  // attackers stand one rank behind, seen from sq
  for (int df : {-1, 1})
    if (int t = step(sq, {df, pawn_dir}); t >= 0 && b.squares[t] == make_piece(by, kPawn)) return true;
  for (Step s : kKnightSteps)
    if (int t = step(sq, s); t >= 0 && b.squares[t] == make_piece(by, kKnight)) return true;
  for (Step s : kKingSteps)
    if (int t = step(sq, s); t >= 0 && b.squares[t] == make_piece(by, kKing)) return true;
  const int queen = make_piece(by, kQueen);
  return slider_attacks(b, sq, kDiagonal, make_piece(by, kBishop), queen) ||
         slider_attacks(b, sq, kStraight, make_piece(by, kRook), queen);
}

bool in_check(const Board& b, Color side) {
  const int k = king_square(b, side);
  return k >= 0 && is_attacked(b, k, side == kWhite ? kBlack : kWhite);
}

Board make_move(const Board& b, const Move& m) {
  Board n = b;
  const int piece = b.squares[m.from];
  const Color us = b.side;
  const bool capture = b.squares[m.to] != 0;
  n.squares[m.from] = 0;
  n.squares[m.to] = static_cast<int8_t>(m.promotion != kNone ? make_piece(us, m.promotion) : piece);
  n.en_passant = -1;
  if (type_of(piece) == kPawn) {
    if (m.to == b.en_passant) n.squares[m.to + (us == kWhite ? -8 : 8)] = 0;  // the captured pawn
    if (std::abs(m.to - m.from) == 16) n.en_passant = (m.from + m.to) / 2;
  }
  if (type_of(piece) == kKing && std::abs(m.to - m.from) == 2) {  // castling moves the rook too
    const int home = us == kWhite ? 0 : 56;
    const bool short_side = m.to > m.from;
    n.squares[home + (short_side ? 5 : 3)] = n.squares[home + (short_side ? 7 : 0)];
    n.squares[home + (short_side ? 7 : 0)] = 0;
  }
  // A move from or to a corner or a king's square removes the rights it touches.
  auto lose = [&](int sq) {
    if (sq == 0) n.castling &= ~kWhiteLong;
    if (sq == 7) n.castling &= ~kWhiteShort;
    if (sq == 4) n.castling &= ~(kWhiteShort | kWhiteLong);
    if (sq == 56) n.castling &= ~kBlackLong;
    if (sq == 63) n.castling &= ~kBlackShort;
    if (sq == 60) n.castling &= ~(kBlackShort | kBlackLong);
  };
  lose(m.from);
  lose(m.to);
  n.halfmove = (type_of(piece) == kPawn || capture) ? 0 : b.halfmove + 1;
  if (us == kBlack) ++n.fullmove;
  n.side = us == kWhite ? kBlack : kWhite;
  return n;
}

std::vector<Move> legal_moves(const Board& b) {
  std::vector<Move> out;
  for (const Move& m : pseudo_legal(b))
    if (!in_check(make_move(b, m), b.side)) out.push_back(m);
  return out;
}

bool parse_uci(const Board& b, const std::string& text, Move& move, std::string& why) {
  auto square = [](const std::string& s, size_t i) {
    return (s[i] >= 'a' && s[i] <= 'h' && s[i + 1] >= '1' && s[i + 1] <= '8') ? (s[i] - 'a') + 8 * (s[i + 1] - '1') : -1;
  };
  if (text.size() != 4 && text.size() != 5) {
    why = "move '" + text + "' is not UCI (expected e.g. e2e4 or e7e8q)";
    return false;
  }
  const int from = square(text, 0), to = square(text, 2);
  PieceType promo = kNone;
  if (text.size() == 5) {
    const std::string kinds = "nbrq";
    const size_t k = kinds.find(text[4]);
    promo = k == std::string::npos ? kPawn : static_cast<PieceType>(kKnight + k);  // kPawn marks a bad letter
  }
  if (from < 0 || to < 0 || promo == kPawn) {
    why = "move '" + text + "' is not UCI (expected e.g. e2e4 or e7e8q)";
    return false;
  }
  const Move m{static_cast<int8_t>(from), static_cast<int8_t>(to), promo};
  for (const Move& legal : legal_moves(b))
    if (legal == m) {
      move = m;
      return true;
    }
  why = "move '" + text + "' is not legal in this position";
  return false;
}

bool parse_fen(const std::string& fen, Board& b, std::string& why) {
  std::istringstream in(fen);
  std::string placement, side, castling, ep, half = "0", full = "1";
  if (!(in >> placement >> side >> castling >> ep)) {
    why = "FEN '" + fen + "' needs at least 4 fields (placement, side, castling, en passant)";
    return false;
  }
  in >> half >> full;
  std::string extra;
  if (in >> extra) {
    why = "FEN has more than 6 fields";
    return false;
  }
  b = Board{};
  int rank = 7, file = 0;
  for (char c : placement) {
    if (c == '/') {
      if (file != 8 || rank == 0) {
        why = "FEN placement: rank " + std::to_string(rank + 1) + " does not have 8 squares";
        return false;
      }
      --rank, file = 0;
    } else if (c >= '1' && c <= '8') {
      file += c - '0';
    } else {
      const char* p = std::strchr(kPieceChars, c);
      if (c == ' ' || p == nullptr) {
        why = std::string("FEN placement: unknown piece '") + c + "'";
        return false;
      }
      if (file > 7) {
        why = "FEN placement: rank " + std::to_string(rank + 1) + " has more than 8 squares";
        return false;
      }
      b.squares[file + 8 * rank] = static_cast<int8_t>(p - kPieceChars);
      ++file;
    }
    if (file > 8) {
      why = "FEN placement: rank " + std::to_string(rank + 1) + " has more than 8 squares";
      return false;
    }
  }
  if (rank != 0 || file != 8) {
    why = "FEN placement must describe 8 ranks of 8 squares";
    return false;
  }
  if (side != "w" && side != "b") {
    why = "FEN side to move is '" + side + "' (expected w or b)";
    return false;
  }
  b.side = side == "w" ? kWhite : kBlack;
  if (castling != "-")
    for (char c : castling) {
      const std::string flags = "KQkq";
      const size_t k = flags.find(c);
      if (k == std::string::npos) {
        why = "FEN castling field '" + castling + "' (expected letters of KQkq or -)";
        return false;
      }
      b.castling |= 1 << k;
    }
  if (ep != "-") {
    if (ep.size() != 2 || ep[0] < 'a' || ep[0] > 'h' || (ep[1] != '3' && ep[1] != '6')) {
      why = "FEN en passant square '" + ep + "' (expected - or a square on rank 3 or 6)";
      return false;
    }
    b.en_passant = (ep[0] - 'a') + 8 * (ep[1] - '1');
  }
  auto number = [&](const std::string& s, int& out, const char* name) {
    char* end = nullptr;
    const long v = std::strtol(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0' || v < 0 || v > 100000) {
      why = std::string("FEN ") + name + " '" + s + "' is not a non-negative number";
      return false;
    }
    out = static_cast<int>(v);
    return true;
  };
  if (!number(half, b.halfmove, "halfmove clock") || !number(full, b.fullmove, "move number")) return false;
  int kings[2] = {0, 0};
  for (int sq = 0; sq < 64; ++sq) {
    const int p = b.squares[sq];
    if (type_of(p) == kKing) ++kings[color_of(p)];
    if (type_of(p) == kPawn && (rank_of(sq) == 0 || rank_of(sq) == 7)) {
      why = "FEN has a pawn on " + square_name(sq);
      return false;
    }
  }
  if (kings[0] != 1 || kings[1] != 1) {
    why = "FEN must have one king per side (white " + std::to_string(kings[0]) + ", black " + std::to_string(kings[1]) + ")";
    return false;
  }
  // Castling rights need the king and rook at home; drop rights that cannot apply rather than
  // reject (many FEN writers leave stale rights).
  if (b.squares[4] != make_piece(kWhite, kKing)) b.castling &= ~(kWhiteShort | kWhiteLong);
  if (b.squares[7] != make_piece(kWhite, kRook)) b.castling &= ~kWhiteShort;
  if (b.squares[0] != make_piece(kWhite, kRook)) b.castling &= ~kWhiteLong;
  if (b.squares[60] != make_piece(kBlack, kKing)) b.castling &= ~(kBlackShort | kBlackLong);
  if (b.squares[63] != make_piece(kBlack, kRook)) b.castling &= ~kBlackShort;
  if (b.squares[56] != make_piece(kBlack, kRook)) b.castling &= ~kBlackLong;
  if (in_check(b, b.side == kWhite ? kBlack : kWhite)) {
    why = "FEN: the side not to move is in check";
    return false;
  }
  return true;
}

Board parse_fen_or_throw(const std::string& fen, const std::string& where) {
  Board b;
  std::string why;
  if (!parse_fen(fen, b, why)) throw Error(where + ": " + why);
  return b;
}

std::string to_fen(const Board& b) {
  std::string s;
  for (int rank = 7; rank >= 0; --rank) {
    int empty = 0;
    for (int file = 0; file < 8; ++file) {
      const int p = b.squares[file + 8 * rank];
      if (p == 0) {
        ++empty;
        continue;
      }
      if (empty) s += static_cast<char>('0' + empty), empty = 0;
      s += kPieceChars[p];
    }
    if (empty) s += static_cast<char>('0' + empty);
    if (rank) s += '/';
  }
  s += b.side == kWhite ? " w " : " b ";
  std::string c;
  if (b.castling & kWhiteShort) c += 'K';
  if (b.castling & kWhiteLong) c += 'Q';
  if (b.castling & kBlackShort) c += 'k';
  if (b.castling & kBlackLong) c += 'q';
  s += c.empty() ? "-" : c;
  s += " " + (b.en_passant < 0 ? std::string("-") : square_name(b.en_passant));
  return s + " " + std::to_string(b.halfmove) + " " + std::to_string(b.fullmove);
}

uint64_t perft(const Board& b, int depth) {
  if (depth == 0) return 1;
  const std::vector<Move> moves = legal_moves(b);
  if (depth == 1) return moves.size();
  uint64_t n = 0;
  for (const Move& m : moves) n += perft(make_move(b, m), depth - 1);
  return n;
}

}  // namespace looplab::chess
