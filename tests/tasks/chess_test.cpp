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

// --- The encoding as the model sees it (SPEC section 3, issue 33 point 4) -------------------
// Grid row 0 = rank 8 (row = 7 - rank, column = file), as the released code's chess_data.py;
// planes 0-5 the side to move's P N B R Q K, 6-11 the opponent's. Every expected cell below is
// worked out by hand from the FEN, not by the code under test.
#include <algorithm>

#include "looplab/tasks/registry.h"

namespace looplab::chess {
namespace {

// The planes set at (row, column) of the first example: a list of plane numbers.
std::vector<int> planes_at(const Examples& e, int row, int col) {
  std::vector<int> out;
  for (int p = 0; p < 12; ++p)
    if (e.inputs[(row * 8 + col) * 12 + p] != 0) out.push_back(p);
  return out;
}
float plane_total(const Examples& e) {
  float n = 0;
  for (int64_t i = 0; i < 64 * 12; ++i) n += e.inputs[i];
  return n;
}

// Black: knight b8, king e8, rook h8 (rank 8); white: pawn d2, rook a1, king g1 (or c1).
TEST(ChessEncoding, WhiteToMoveRank8InRow0) {
  const Examples e = looplab::task("chess").encode_query("1n2k2r/8/8/8/8/8/3P4/R5K1 w - - 0 1");
  ASSERT_EQ(e.positions, 64);
  ASSERT_EQ(e.channels, 12);
  EXPECT_EQ(plane_total(e), 6);
  EXPECT_EQ(planes_at(e, 0, 1), std::vector<int>{7});   // b8: the opponent's knight
  EXPECT_EQ(planes_at(e, 0, 4), std::vector<int>{11});  // e8: the opponent's king
  EXPECT_EQ(planes_at(e, 0, 7), std::vector<int>{9});   // h8: the opponent's rook
  EXPECT_EQ(planes_at(e, 6, 3), std::vector<int>{0});   // d2: own pawn
  EXPECT_EQ(planes_at(e, 7, 0), std::vector<int>{3});   // a1: own rook
  EXPECT_EQ(planes_at(e, 7, 6), std::vector<int>{5});   // g1: own king (files e-h: no mirror)
}

TEST(ChessEncoding, BlackToMoveFlipsRanksAndSwapsColours) {
  // Black to move: rotated by 180 degrees (b8 -> g1, e8 -> d1, ...), colours swapped, then
  // mirrored because the mover's king landed on d1: together the ranks flip and files stay.
  const Examples e = looplab::task("chess").encode_query("1n2k2r/8/8/8/8/8/3P4/R5K1 b - - 0 1");
  EXPECT_EQ(plane_total(e), 6);
  EXPECT_EQ(planes_at(e, 7, 1), std::vector<int>{1});   // black's knight b8, now own, bottom row
  EXPECT_EQ(planes_at(e, 7, 4), std::vector<int>{5});   // black's king e8: own king
  EXPECT_EQ(planes_at(e, 7, 7), std::vector<int>{3});   // black's rook h8: own rook
  EXPECT_EQ(planes_at(e, 1, 3), std::vector<int>{6});   // white's pawn d2: the opponent's, row 1
  EXPECT_EQ(planes_at(e, 0, 0), std::vector<int>{9});   // white's rook a1: top row
  EXPECT_EQ(planes_at(e, 0, 6), std::vector<int>{11});  // white's king g1
}

TEST(ChessEncoding, KingOnTheQueenSideMirrorsTheFiles) {
  // White to move with its king on c1 (file c): files mirrored, a <-> h, b <-> g, ...
  const Examples e = looplab::task("chess").encode_query("1n2k2r/8/8/8/8/8/3P4/R1K5 w - - 0 1");
  EXPECT_EQ(plane_total(e), 6);
  EXPECT_EQ(planes_at(e, 0, 6), std::vector<int>{7});   // b8 knight -> column 6
  EXPECT_EQ(planes_at(e, 0, 3), std::vector<int>{11});  // e8 king -> column 3
  EXPECT_EQ(planes_at(e, 0, 0), std::vector<int>{9});   // h8 rook -> column 0
  EXPECT_EQ(planes_at(e, 6, 4), std::vector<int>{0});   // d2 pawn -> column 4
  EXPECT_EQ(planes_at(e, 7, 7), std::vector<int>{3});   // a1 rook -> column 7
  EXPECT_EQ(planes_at(e, 7, 5), std::vector<int>{5});   // c1 king -> column 5
}

// The two target cells of each example of a split, sorted.
std::vector<std::vector<int>> target_cells(const Examples& e) {
  std::vector<std::vector<int>> out;
  for (int64_t i = 0; i < e.count; ++i) {
    std::vector<int> cells;
    for (int c = 0; c < 64; ++c)
      if (e.targets[i * 64 + c] == 1) cells.push_back(c);
    out.push_back(cells);
  }
  return out;
}

// Lichess's puzzle 00008 after Moves[0] (Bxg3): white to move, king h1, no mirror.
const char* k00008 = "r6k/pp2r2p/4Rp1Q/3p4/8/1N1P2R1/PqP2bPP/7K b - - 0 24";
std::string lichess_row(const std::string& id, const std::string& fen, const std::string& moves, int rating) {
  return id + "," + fen + "," + moves + "," + std::to_string(rating) + ",0,0,0,t,,\n";
}

TEST_F(LichessFile, TargetsAndPiecesOnTheGrid) {
  const std::string path =
      write("t.csv", std::string(kHeader) + "\n" + lichess_row("a", k00008, "f2g3 e6e7", 1000) +
                         lichess_row("b", "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1", "e2e4 e8d7", 1000));
  DataOptions d = looplab::task("chess").default_data();
  d.train_file = path;
  const Examples e = looplab::task("chess").load(d, "train");
  ASSERT_EQ(e.count, 2);
  // Re6-e7: e6 = row 2, column 4 (cell 20); e7 = row 1, column 4 (cell 12).
  // Black's Ke8-d7, ranks flipped: e8 -> e1 = row 7, column 4 (cell 60); d7 -> d2 = cell 51.
  EXPECT_EQ(target_cells(e), (std::vector<std::vector<int>>{{12, 20}, {51, 60}}));
  const float* x = e.inputs.data();
  EXPECT_EQ(x[0 * 12 + 9], 1);   // a8: black's rook (the opponent's), cell 0
  EXPECT_EQ(x[7 * 12 + 11], 1);  // h8: black's king, cell 7
  EXPECT_EQ(x[63 * 12 + 5], 1);  // h1: white's king, cell 63
  EXPECT_EQ(x[46 * 12 + 8], 1);  // g3: black's bishop after Moves[0], cell 46
}

// --- The rating bands: train and val at most 1600, hard 1601-2000 ---------------------------

TEST_F(LichessFile, SplitBoundariesAt1600And2000) {
  // Five solutions of one position, told apart by their squares, rated across the boundaries.
  const std::string path = write(
      "r.csv", std::string(kHeader) + "\n" + lichess_row("r1599", k00008, "f2g3 e6e7", 1599) +
                   lichess_row("r1600", k00008, "f2g3 e6f6", 1600) + lichess_row("r1601", k00008, "f2g3 h2g3", 1601) +
                   lichess_row("r2000", k00008, "f2g3 b3d4", 2000) + lichess_row("r2001", k00008, "f2g3 h6f6", 2001));
  const Task& chess = looplab::task("chess");
  DataOptions d = chess.default_data();
  d.data_file = path;
  d.train_count = 1, d.val_count = 1, d.hard_count = 2;
  // Cells by hand: e6 20, e7 12, f6 21, h2 55, g3 46, b3 41, d4 35.
  auto easy = target_cells(chess.load(d, "train"));
  const auto val = target_cells(chess.load(d, "val"));
  easy.insert(easy.end(), val.begin(), val.end());
  std::sort(easy.begin(), easy.end());
  EXPECT_EQ(easy, (std::vector<std::vector<int>>{{12, 20}, {20, 21}}));  // 1599 and 1600
  auto hard = target_cells(chess.load(d, "hard"));
  std::sort(hard.begin(), hard.end());
  EXPECT_EQ(hard, (std::vector<std::vector<int>>{{35, 41}, {46, 55}}));  // 2000 and 1601
  // Two puzzles in each band, so asking for three is an error naming the band.
  d.train_count = 2;
  d.hard_count = 3;
  try {
    chess.load(d, "val");  // train's 2 fit; val comes after them
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), path + ": 2 puzzles rated 1600 or below, need 2 for train + 1 for val");
  }
  try {
    chess.load(d, "hard");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), path + ": 2 puzzles rated 1601-2000, need 3 for hard");
  }
}

// --- eval --scaling: rating bands, less the puzzles train and val read ---------------------

TEST_F(LichessFile, DifficultyLevelsAreRatingBandsLessTrainAndVal) {
  // Ten puzzles told apart by their target squares; train and val (one each) read the first two
  // rated 1600 or below in file order: rows 0 and 2.
  const char* kPawn = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1";
  const std::vector<std::pair<std::string, int>> rows = {
      {"f2g3 e6e7", 1000}, {"f2g3 e6f6", 2001}, {"f2g3 h2g3", 1600}, {"f2g3 b3d4", 1001}, {"f2g3 h6f6", 1601},
      {"e2e4 e8d7", 900},  {"e2e4 e8e7", 2000}, {"e2e4 e8f7", 2400}, {"e2e4 e8d8", 2401}, {"e2e4 e8f8", 1400}};
  std::string text = std::string(kHeader) + "\n";
  for (size_t i = 0; i < rows.size(); ++i)
    text += lichess_row("p" + std::to_string(i), i < 5 ? k00008 : kPawn, rows[i].first, rows[i].second);
  const std::string path = write("levels.csv", text);
  const Task& chess = looplab::task("chess");
  DataOptions d = chess.default_data();
  d.train_file = path;
  const auto cells = target_cells(chess.load(d, "train"));  // every row, in file order
  auto rows_of = [&](const Examples& e) {
    std::vector<int> out;
    for (const auto& c : target_cells(e)) out.push_back(static_cast<int>(std::find(cells.begin(), cells.end(), c) - cells.begin()));
    return out;
  };
  d.train_file.clear();
  d.data_file = path;
  d.train_count = 1, d.val_count = 1;
  const Difficulty levels = chess.difficulty_levels(d, 100);
  EXPECT_EQ(levels.measure, "puzzle rating");
  // By hand: at most 1000 rows 0 (used) and 5; 1001-1400 rows 3 and 9; 1401-1600 row 2 (used):
  // left out; 1601-2000 rows 4 and 6; 2001-2400 rows 1 and 7; 2401 or more row 8.
  ASSERT_EQ(levels.levels.size(), 5u);
  const std::vector<std::string> labels = {"rating 0-1000", "rating 1001-1400", "rating 1601-2000", "rating 2001-2400",
                                           "rating 2401 or more"};
  const std::vector<std::vector<int>> want = {{5}, {3, 9}, {4, 6}, {1, 7}, {8}};
  const std::vector<double> medians = {900, 1200.5, 1800.5, 2200.5, 2401};
  for (size_t b = 0; b < 5; ++b) {
    EXPECT_EQ(levels.levels[b].label, labels[b]);
    EXPECT_EQ(levels.levels[b].size, 64);
    EXPECT_EQ(rows_of(levels.levels[b].examples), want[b]) << labels[b];
    EXPECT_EQ(levels.levels[b].difficulty, medians[b]) << labels[b];
  }
  // One per level: the first of each band.
  const Difficulty one = chess.difficulty_levels(d, 1);
  EXPECT_EQ(rows_of(one.levels[1].examples), (std::vector<int>{3}));
  EXPECT_EQ(one.levels[1].difficulty, 1001);
}

// --- Decoding the model's two squares back into a move of the original board ---------------

// The answer describe_answer gets when the model marks exactly `cells` (the first the likelier).
std::string move_of(const std::string& fen, int first, int second) {
  std::vector<int64_t> answer(64, 0);
  std::vector<float> logits(128, 0.0f);
  answer[first] = answer[second] = 1;
  logits[first * 2 + 1] = 2;
  logits[second * 2 + 1] = 1;
  const std::string text = looplab::task("chess").describe_answer(fen, answer, logits, 7);
  const std::string key = "model's move after 7 iterations: ";
  const size_t at = text.find(key);
  if (at == std::string::npos) return "no move in: " + text;
  const size_t end = text.find('\n', at);
  const std::string legal = text.substr(end + 1, text.find('\n', end + 1) - end - 1);
  return text.substr(at + key.size(), end - at - key.size()) + (legal == "legal: yes" ? "" : " (" + legal + ")");
}

TEST(ChessDecoding, HandPickedCellsGiveTheMove) {
  // White, no mirror: e6 = cell 20, e7 = cell 12 (either order of the logits).
  // (The position of puzzle 00008 after Bxg3.)
  const std::string after = "r6k/pp2r2p/4Rp1Q/3p4/8/1N1P2b1/PqP3PP/7K w - - 0 25";
  EXPECT_EQ(move_of(after, 20, 12), "e6e7");
  EXPECT_EQ(move_of(after, 12, 20), "e6e7");
  EXPECT_EQ(move_of(after, 55, 46), "h2g3");
  // Black to move, ranks flipped: cell 60 = e1 on the grid = black's e8; cell 51 = d2 = d7.
  EXPECT_EQ(move_of("4k3/8/8/8/4P3/8/8/4K3 b - - 0 1", 60, 51), "e8d7");
  // White king on c1, files mirrored: a1 is cell 63, a8 cell 7.
  EXPECT_EQ(move_of("1n2k2r/8/8/8/8/8/3P4/R1K5 w - - 0 1", 63, 7), "a1a8");
}

TEST_F(LichessFile, EveryLegalMoveSurvivesEncodeAndDecode) {
  // Positions before the opponent's move: after it, white or black to move, with the mover's
  // king on either side (and a promotion, castling and en passant among the moves).
  struct Start {
    std::string fen, opponent;
  };
  const std::vector<Start> starts = {
      {k00008, "f2g3"},                                                    // white, king h1
      {"r3k2r/1P6/8/8/8/8/6p1/R3K2R b KQkq - 0 1", "a8a7"},                // white, king e1, castling both ways
      {"r3k2r/1P6/8/8/8/8/6p1/R3K2R w KQkq - 0 1", "a1a2"},                // black, king e8, promotions
      {"2k5/8/8/8/3p4/8/4P3/K7 w - - 0 1", "e2e4"},                        // black, king c8, en passant
      {"1k6/8/8/8/8/8/1p6/4K2R b K - 0 1", "b8a8"},                        // white, king e1
      {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "g1f3"},  // black, king e8
  };
  std::string text = std::string(kHeader) + "\n";
  std::vector<std::string> fens, moves;
  for (const Start& s : starts) {
    const Board before = parse_fen_or_throw(s.fen, "start");
    Move m0;
    std::string why;
    ASSERT_TRUE(parse_uci(before, s.opponent, m0, why)) << why;
    const Board after = make_move(before, m0);
    for (const Move& m : legal_moves(after)) {
      if (m.promotion != kNone && m.promotion != kQueen) continue;  // the decoder reads a queen's
      text += lichess_row("m", s.fen, s.opponent + " " + to_uci(m), 1000);
      fens.push_back(to_fen(after));
      moves.push_back(to_uci(m));
    }
  }
  DataOptions d = looplab::task("chess").default_data();
  d.train_file = write("all.csv", text);
  const Examples e = looplab::task("chess").load(d, "train");
  ASSERT_EQ(e.count, static_cast<int64_t>(moves.size()));
  ASSERT_GT(e.count, 100);
  for (int64_t i = 0; i < e.count; ++i) {
    std::vector<int> cells;
    for (int c = 0; c < 64; ++c)
      if (e.targets[i * 64 + c] == 1) cells.push_back(c);
    ASSERT_EQ(cells.size(), 2u) << moves[i];
    EXPECT_EQ(move_of(fens[i], cells[0], cells[1]), moves[i]) << fens[i];
    EXPECT_EQ(move_of(fens[i], cells[1], cells[0]), moves[i]) << fens[i];
  }
}

}  // namespace
}  // namespace looplab::chess
