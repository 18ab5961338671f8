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

// --- Lichess puzzles -----------------------------------------------------------------------
#include <zstd.h>

#include <filesystem>
#include <fstream>

#include "looplab/tasks/chess/puzzles.h"

namespace looplab::chess {
namespace {

namespace fs = std::filesystem;

const char* kHeader = "PuzzleId,FEN,Moves,Rating,RatingDeviation,Popularity,NbPlays,Themes,GameUrl,OpeningTags";
// The first puzzle of the Lichess database: black plays Bxg3, white must find Re7.
const char* kRow00008 =
    "00008,r6k/pp2r2p/4Rp1Q/3p4/8/1N1P2R1/PqP2bPP/7K b - - 0 24,f2g3 e6e7 b2b1 b3c1 b1c1 h6c1,1913,75,94,6230,"
    "crushing hangingPiece long middlegame,https://lichess.org/787zsVup/black#48,";

TEST(ChessPuzzles, WhiteToMoveKingOnTheRightStaysAsIs) {
  PuzzleRow row{"00008", "r6k/pp2r2p/4Rp1Q/3p4/8/1N1P2R1/PqP2bPP/7K b - - 0 24", "f2g3 e6e7 b2b1", 1913};
  Example e;
  std::string why;
  ASSERT_TRUE(to_example(row, e, why)) << why;
  EXPECT_EQ(e.from, 44);  // e6
  EXPECT_EQ(e.to, 52);    // e7
  EXPECT_EQ(e.pieces[7], make_piece(kWhite, kKing));   // h1
  EXPECT_EQ(e.pieces[22], make_piece(kBlack, kBishop));  // the bishop now on g3
  EXPECT_EQ(e.pieces[13], 0);                            // f2 emptied
}

TEST(ChessPuzzles, BlackToMoveIsFlippedAndRecoloured) {
  // After e2e4 black (king e8) must play Kd7: rotating by 180 degrees puts that king on d1, so
  // the files are mirrored too, which together flips the ranks only.
  PuzzleRow row{"t", "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1", "e2e4 e8d7", 1000};
  Example e;
  std::string why;
  ASSERT_TRUE(to_example(row, e, why)) << why;
  EXPECT_EQ(e.from, 4);   // e8 -> e1
  EXPECT_EQ(e.to, 11);    // d7 -> d2
  EXPECT_EQ(e.pieces[4], make_piece(kWhite, kKing));   // the side to move is "white"
  EXPECT_EQ(e.pieces[36], make_piece(kBlack, kPawn));  // e4 -> e5, the opponent's
  EXPECT_EQ(e.pieces[60], make_piece(kBlack, kKing));  // e1 -> e8
  // A king on the queen side is mirrored to the king side.
  PuzzleRow left{"l", "8/8/8/8/8/8/1P1k4/K7 w - - 0 1", "b2b3 d2d3", 1000};
  ASSERT_TRUE(to_example(left, e, why)) << why;
  // Black king d2 -> rotated e7 (file e): no mirror. d2d3 -> e7e6.
  EXPECT_EQ(e.from, 52);
  EXPECT_EQ(e.to, 44);
  PuzzleRow white_left{"w", "k7/8/8/8/8/8/8/1K6 b - - 0 1", "a8a7 b1c2", 1000};
  ASSERT_TRUE(to_example(white_left, e, why)) << why;
  EXPECT_EQ(e.from, 6);   // b1 -> g1
  EXPECT_EQ(e.to, 13);    // c2 -> f2
}

class LichessFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("looplab_chess_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text, bool zstd = false) {
    const std::string path = (dir_ / name).string();
    std::string bytes = text;
    if (zstd) {
      bytes.resize(ZSTD_compressBound(text.size()));
      bytes.resize(ZSTD_compress(&bytes[0], bytes.size(), text.data(), text.size(), 3));
    }
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  std::string error_of(const std::string& row) {
    const std::string path = write("bad.csv", std::string(kHeader) + "\n" + kRow00008 + "\n" + row + "\n");
    try {
      read_lichess(path, {});
    } catch (const Error& e) {
      return std::string(e.what()).substr(path.size());
    }
    return "no error";
  }
  fs::path dir_;
};

TEST_F(LichessFile, PlainAndZstdReadTheSame) {
  std::string text = std::string(kHeader) + "\n";
  for (int i = 0; i < 3000; ++i) text += std::string(kRow00008) + "\n";  // several zstd blocks
  const auto plain = read_lichess(write("p.csv", text), {});
  const auto packed = read_lichess(write("p.csv.zst", text, true), {});
  ASSERT_EQ(plain.examples.size(), 3000u);
  ASSERT_EQ(packed.examples.size(), 3000u);
  EXPECT_EQ(packed.examples[2999].pieces, plain.examples[0].pieces);
  EXPECT_EQ(packed.examples[2999].to, 52);
  // A truncated compressed file is an error, not a short read.
  std::string bytes(ZSTD_compressBound(text.size()), '\0');
  bytes.resize(ZSTD_compress(&bytes[0], bytes.size(), text.data(), text.size(), 3));
  const std::string cut = (dir_ / "cut.csv.zst").string();
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  EXPECT_THROW(read_lichess(cut, {}), Error);
}

TEST_F(LichessFile, RatingFilterAndLimit) {
  const std::string path = write("r.csv", std::string(kHeader) + "\n" + kRow00008 + "\n" + kRow00008 + "\n");
  ReadOptions easy;
  easy.max_rating = 1599;
  const auto r = read_lichess(path, easy);
  EXPECT_EQ(r.examples.size(), 0u);
  EXPECT_EQ(r.filtered, 2);
  ReadOptions one;
  one.limit = 1;
  EXPECT_EQ(read_lichess(path, one).examples.size(), 1u);
}

TEST_F(LichessFile, EachKindOfBadRowNamesItsLine) {
  const std::string fen = "r6k/pp2r2p/4Rp1Q/3p4/8/1N1P2R1/PqP2bPP/7K b - - 0 24";
  EXPECT_EQ(error_of("x," + fen + ",f2g3 e6e7,1913"), ":3: expected 10 fields, got 4");
  EXPECT_EQ(error_of("x," + fen + ",f2g3 e6e7,high,1,1,1,t,u,"), ":3: field 'Rating': 'high' is not an integer");
  EXPECT_EQ(error_of("x,r6k/pp2r2p/4Rp1Q/3p4/8/1N1P2R1/PqP2bPP b - - 0 24,f2g3 e6e7,1913,1,1,1,t,u,"),
            ":3: field 'FEN': FEN placement must describe 8 ranks of 8 squares");
  EXPECT_EQ(error_of("x," + fen + ",f2g3,1913,1,1,1,t,u,"),
            ":3: field 'Moves': 'f2g3' needs at least two moves (the opponent's and the solution's)");
  EXPECT_EQ(error_of("x," + fen + ",f2g4 e6e7,1913,1,1,1,t,u,"),
            ":3: field 'Moves': first move 'f2g4' is not legal in this position");
  EXPECT_EQ(error_of("x," + fen + ",f2g3 e6e9,1913,1,1,1,t,u,"),
            ":3: field 'Moves': second move 'e6e9' is not UCI (expected e.g. e2e4 or e7e8q)");
  const std::string path = write("mixed.csv", std::string(kHeader) + "\n" + kRow00008 + "\nx," + fen + ",f2g3,1913,1,1,1,t,u,\n");
  ReadOptions skip;
  skip.skip_bad = true;
  const auto r = read_lichess(path, skip);
  EXPECT_EQ(r.examples.size(), 1u);
  EXPECT_EQ(r.skipped, 1);
}

}  // namespace
}  // namespace looplab::chess
