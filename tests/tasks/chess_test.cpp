#include "looplab/tasks/chess/board.h"

#include <gtest/gtest.h>

#include "looplab/util/error.h"

namespace looplab::chess {
namespace {

const char* kStart = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
const char* kKiwipete = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq -";

// Published perft counts (chessprogramming.org, "Perft Results": positions 1-6).
struct PerftCase {
  const char* fen;
  std::vector<uint64_t> counts;  // depth 1, 2, ...
};
const std::vector<PerftCase> kSuite = {
    {kStart, {20, 400, 8902, 197281, 4865609}},
    {kKiwipete, {48, 2039, 97862, 4085603}},
    {"8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - -", {14, 191, 2812, 43238, 674624}},
    {"r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", {6, 264, 9467, 422333}},
    {"rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", {44, 1486, 62379, 2103487}},
    {"r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10", {46, 2079, 89890, 3894594}},
};

TEST(ChessPerft, PublishedCounts) {
  for (const PerftCase& c : kSuite) {
    const Board b = parse_fen_or_throw(c.fen, "test");
    for (size_t d = 0; d < c.counts.size(); ++d) EXPECT_EQ(perft(b, static_cast<int>(d + 1)), c.counts[d]) << c.fen << " depth " << d + 1;
  }
}

TEST(ChessFen, RoundTrip) {
  for (const PerftCase& c : kSuite) {
    const Board b = parse_fen_or_throw(c.fen, "test");
    const Board again = parse_fen_or_throw(to_fen(b), "again");
    EXPECT_EQ(to_fen(again), to_fen(b));
  }
  EXPECT_EQ(to_fen(parse_fen_or_throw(kStart, "s")), kStart);
}

TEST(ChessFen, BadFensSayWhy) {
  auto why = [](const std::string& fen) {
    Board b;
    std::string w;
    EXPECT_FALSE(parse_fen(fen, b, w)) << fen;
    return w;
  };
  EXPECT_EQ(why("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq -"), "FEN placement must describe 8 ranks of 8 squares");
  EXPECT_EQ(why("rnbqkbnr/ppppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"), "FEN placement: rank 7 has more than 8 squares");
  EXPECT_EQ(why("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq -"), "FEN placement: unknown piece 'X'");
  EXPECT_EQ(why("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq -"), "FEN side to move is 'x' (expected w or b)");
  EXPECT_EQ(why("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQz -"),
            "FEN castling field 'KQz' (expected letters of KQkq or -)");
  EXPECT_EQ(why("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e5"),
            "FEN en passant square 'e5' (expected - or a square on rank 3 or 6)");
  EXPECT_EQ(why("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQQBNR w KQkq -"), "FEN must have one king per side (white 0, black 1)");
  EXPECT_EQ(why("4k3/8/8/8/8/8/8/4K2P w - -"), "FEN has a pawn on h1");
  EXPECT_EQ(why("4k3/8/8/8/8/8/4R3/3K4 w - -"), "FEN: the side not to move is in check");
  EXPECT_EQ(why("rnbqkbnr w"), "FEN 'rnbqkbnr w' needs at least 4 fields (placement, side, castling, en passant)");
}

TEST(ChessUci, ParseLegalAndIllegal) {
  const Board b = parse_fen_or_throw(kStart, "s");
  Move m;
  std::string why;
  ASSERT_TRUE(parse_uci(b, "e2e4", m, why));
  EXPECT_EQ(to_uci(m), "e2e4");
  const Board after = make_move(b, m);
  EXPECT_EQ(to_fen(after), "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1");
  EXPECT_FALSE(parse_uci(b, "e2e5", m, why));
  EXPECT_EQ(why, "move 'e2e5' is not legal in this position");
  EXPECT_FALSE(parse_uci(b, "e2", m, why));
  EXPECT_EQ(why, "move 'e2' is not UCI (expected e.g. e2e4 or e7e8q)");
  EXPECT_FALSE(parse_uci(b, "e2e4x", m, why));
  // Promotion, castling and en passant as UCI.
  const Board promo = parse_fen_or_throw("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "p");
  ASSERT_TRUE(parse_uci(promo, "b7b8n", m, why)) << why;
  EXPECT_EQ(m.promotion, kKnight);
  EXPECT_FALSE(parse_uci(promo, "b7b8", m, why));  // a promotion must name its piece
  const Board kiwi = parse_fen_or_throw(kKiwipete, "k");
  ASSERT_TRUE(parse_uci(kiwi, "e1g1", m, why)) << why;
  EXPECT_EQ(to_fen(make_move(kiwi, m)), "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R4RK1 b kq - 1 1");
  const Board ep = parse_fen_or_throw("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2", "ep");
  ASSERT_TRUE(parse_uci(ep, "e5d6", m, why)) << why;
  EXPECT_EQ(to_fen(make_move(ep, m)), "4k3/8/3P4/8/8/8/8/4K3 b - - 0 2");
}

}  // namespace
}  // namespace looplab::chess
