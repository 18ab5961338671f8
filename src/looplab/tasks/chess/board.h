// Chess positions and legal moves: FEN in and out, UCI moves, legal move generation with
// castling, en passant and promotion, and perft to check it against published counts.
// A plain 64-square board with copy-make: simple to read and fast enough for data and tests
// (millions of positions per second). No LibTorch here.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace looplab::chess {

// Squares 0..63 are a1, b1, ..., h1, a2, ..., h8 (file + 8 * rank).
inline int file_of(int sq) { return sq & 7; }
inline int rank_of(int sq) { return sq >> 3; }
std::string square_name(int sq);

enum Color : int { kWhite = 0, kBlack = 1 };
enum PieceType : int { kNone = 0, kPawn, kKnight, kBishop, kRook, kQueen, kKing };

// A piece is its type plus 8 for black (0 = empty square).
inline int make_piece(Color c, PieceType t) { return t + (c == kBlack ? 8 : 0); }
inline PieceType type_of(int piece) { return static_cast<PieceType>(piece & 7); }
inline Color color_of(int piece) { return piece >= 8 ? kBlack : kWhite; }

enum Castling : int { kWhiteShort = 1, kWhiteLong = 2, kBlackShort = 4, kBlackLong = 8 };

struct Move {
  int8_t from = 0, to = 0;
  PieceType promotion = kNone;
  bool operator==(const Move& o) const { return from == o.from && to == o.to && promotion == o.promotion; }
};
std::string to_uci(const Move& m);

struct Board {
  std::array<int8_t, 64> squares{};
  Color side = kWhite;
  int castling = 0;      // Castling bits
  int en_passant = -1;   // the square a pawn may capture onto, or -1
  int halfmove = 0, fullmove = 1;
};

// On failure returns false and sets `why` (which field, what is wrong). Checks the structure
// of every field, one king per side, no pawn on the first or last rank, and that the side not
// to move is not in check.
bool parse_fen(const std::string& fen, Board& board, std::string& why);
Board parse_fen_or_throw(const std::string& fen, const std::string& where);
std::string to_fen(const Board& board);

bool is_attacked(const Board& board, int square, Color by);
bool in_check(const Board& board, Color side);
std::vector<Move> legal_moves(const Board& board);
Board make_move(const Board& board, const Move& move);  // the move must be legal

// A UCI move ("e2e4", "e7e8q"): false with `why` if it is malformed or not legal here.
bool parse_uci(const Board& board, const std::string& text, Move& move, std::string& why);

// Leaf positions at `depth` (perft).
uint64_t perft(const Board& board, int depth);

}  // namespace looplab::chess
