// Chess as a looplab task (SPEC section 3): 8x8 boards oriented for the side to move, grid row
// 0 = rank 8 (as the paper's released code), 12 piece planes, two classes per square (1 on the
// move's from and to squares), full attention; train and val rated at most 1600, hard 1601-2000
// (Lichess puzzle files, plain or zstd).
#include <algorithm>
#include <cstdio>
#include <functional>

#include "looplab/tasks/rated_puzzles.h"
#include "looplab/tasks/chess/generator.h"
#include "looplab/tasks/chess/puzzles.h"
#include "looplab/tasks/task.h"
#include "looplab/util/error.h"
#include "looplab/util/progress.h"

namespace looplab {

namespace {

// The split bands of SPEC section 3, as the released code keeps them (min <= rating <= max):
// train and val rated at most 1600, hard 1601-2000.
constexpr int kEasyMax = 1600, kHardMin = 1601, kHardMax = 2000;

// 12 planes: the six own piece types (P N B R Q K), then the opponent's, of an oriented board
// (indexed by square), at the grid cell of each square (rank 8 in row 0).
void encode_board(const std::array<int8_t, 64>& pieces, float* out) {
  for (int sq = 0; sq < 64; ++sq) {
    const int p = pieces[sq];
    if (p != 0)
      out[chess::grid_cell(sq) * 12 + (chess::color_of(p) == chess::kWhite ? 0 : 6) + chess::type_of(p) - 1] = 1;
  }
}

Examples encode(const std::vector<chess::Example>& examples, const std::vector<int64_t>& pick) {
  Examples e;
  e.resize(static_cast<int64_t>(pick.size()), 64, 12);
  for (int64_t i = 0; i < e.count; ++i) {
    const chess::Example& x = examples[pick[i]];
    encode_board(x.pieces, e.input(i));
    e.target(i)[chess::grid_cell(x.from)] = 1;
    e.target(i)[chess::grid_cell(x.to)] = 1;
  }
  return e;
}

chess::Board parse(const std::string& fen) {
  chess::Board b;
  std::string why;
  if (!chess::parse_fen(fen, b, why)) throw OptionError("fen", ": " + why);
  if (chess::legal_moves(b).empty()) throw OptionError("fen", ": the side to move has no legal move");
  return b;
}

class Chess : public Task {
 public:
  const TaskSpec& spec() const override {
    static const TaskSpec s{"chess", {8, 8}, 12, 2, false, Decoding::kTopTwoMove, TaskSpec::Version1Inputs::kMoved};
    return s;
  }

  DataOptions default_data() const override { return puzzle_data(Task::default_data()); }
  Preset preset(const std::string& name) const override { return puzzle_preset(Task::preset(name), name); }

  // The rows of the data file that train + val (hard: false) or hard read: the first puzzles of
  // the split's rating band in file order. Easy (train, val): rating at most 1600; hard:
  // 1601-2000 (both ends included, as the released code).
  static chess::ReadOptions band_of(const DataOptions& s, bool hard) {
    chess::ReadOptions options;
    options.skip_bad = s.skip_bad;
    options.min_rating = hard ? kHardMin : 0;
    options.max_rating = hard ? kHardMax : kEasyMax;
    options.limit = hard ? s.hard_count : s.train_count + s.val_count;
    return options;
  }

  // Each split reads its band (band_of). The database is ordered by puzzle id, effectively
  // random, so the first puzzles of each band are a fair sample; they are shuffled with the data
  // seed before train and val are cut.
  Examples load(const DataOptions& s, const std::string& split) const override {
    s.count(split);  // checks the split's name
    chess::ReadOptions options;
    options.skip_bad = s.skip_bad;
    const std::string& file = s.file(split);
    if (!file.empty()) {
      const auto examples = chess::read_lichess(s.resolve(file), options).examples;
      return encode(examples, all_of(examples.size()));
    }
    if (s.data_file.empty())
      throw Error("chess: no puzzles given (a data file: a Lichess puzzle CSV or .csv.zst, e.g. from `looplab data chess`)");
    const std::string path = s.resolve(s.data_file);
    const bool hard = split == "hard";
    const std::vector<chess::Example> band = chess::read_lichess(path, band_of(s, hard)).examples;
    return encode(band, pick_from_band(all_of(band.size()), s, split, path,
                                       hard ? "puzzles rated 1601-2000" : "puzzles rated 1600 or below"));
  }

  Examples synthetic(int64_t count, int64_t positions, uint64_t seed) const override {
    return random_one_hot(count, positions, 12, 2, seed);
  }

  // Bands of puzzle rating (at most 1000, 1001-1400, 1401-1600, 1601-2000, 2001-2400, 2401 or
  // more), each level the first puzzles of its band in file order, less the ones train and val
  // read (band_of).
  Difficulty difficulty_levels(const DataOptions& s, int64_t count) const override {
    if (s.data_file.empty())
      throw Error("--scaling: chess's levels come from a rated data file, and this run has none (it reads its splits "
                  "from their own files)");
    chess::ReadOptions options;
    options.skip_bad = s.skip_bad;
    const std::vector<chess::Example> all = chess::read_lichess(s.resolve(s.data_file), options).examples;
    std::vector<int64_t> ratings;
    std::vector<bool> used(all.size(), false);
    const chess::ReadOptions easy = band_of(s, false);
    int64_t read = 0;
    for (size_t i = 0; i < all.size(); ++i) {
      ratings.push_back(all[i].rating);
      if (all[i].rating >= easy.min_rating && all[i].rating <= easy.max_rating && read < easy.limit)
        used[i] = true, ++read;
    }
    Difficulty out{"puzzle rating", {}};
    for (const RatedLevel& l : rated_levels(
             ratings, used, {{0, 1000}, {1001, 1400}, {1401, kEasyMax}, {kHardMin, kHardMax}, {2001, 2400}, {2401, INT64_MAX}},
             count))
      out.levels.push_back({l.label, 64, l.median, encode(all, l.picks)});
    return out;
  }

  Tool generator() const override {
    return {"chess",
            "Puzzles from engine analysis of varied self-play, rated by search depth (Lichess format; docs/chess.md)",
            {{"count", "number of puzzles", "1000"},
             {"seed", "random seed (the file is the same for any thread count)", "0"},
             {"depth", "analysis depth: a solution is rated by the depth it is found at", "8"},
             {"engine", "UCI engine (default: $LOOPLAB_STOCKFISH, stockfish on PATH, /usr/games/stockfish)", ""},
             {"out", "CSV file to write", "", Parameter::kValue, true}},
            [](const Values& v, int threads) {
              const int64_t count = int_value(v, "count");
              if (count < 1) throw OptionError("count", " must be >= 1");
              chess::ChessGeneratorOptions options;
              options.engine = v.count("engine") ? v.at("engine") : "";
              options.depth = static_cast<int>(int_value(v, "depth"));
              options.threads = threads;
              Progress progress("chess puzzles");
              const auto rows = chess::generate_chess(count, seed_value(v, "seed"), options, std::ref(progress));
              const std::string& out = text_value(v, "out");
              chess::write_lichess(out, rows);
              int64_t easy = 0, hard = 0;
              for (const auto& r : rows) {
                easy += r.rating <= kEasyMax;
                hard += r.rating >= kHardMin && r.rating <= kHardMax;
              }
              std::printf("wrote %lld puzzles to %s in %.1f s on %d threads: %lld rated 1600 or below, %lld rated 1601-2000\n",
                          static_cast<long long>(count), out.c_str(), progress.seconds(), options.threads,
                          static_cast<long long>(easy), static_cast<long long>(hard));
            }};
  }

  SolveOption solve_option() const override { return {"fen", "chess: the position in which the model must move (FEN)"}; }

  Examples encode_query(const std::string& fen) const override {
    const chess::Board oriented = chess::orient(parse(fen));
    std::array<int8_t, 64> pieces;
    for (int sq = 0; sq < 64; ++sq) pieces[sq] = oriented.squares[sq];
    Examples e;
    e.resize(1, 64, 12);
    encode_board(pieces, e.input(0));
    return e;
  }

  // The answer's two squares (the larger class-1 logit first): grid cells back to squares of
  // the oriented board, then back to the board's own orientation; the move goes from the square
  // holding a piece of the side to move, and a promotion is taken as a queen's.
  std::string describe_answer(const std::string& fen, const std::vector<int64_t>& answer,
                              const std::vector<float>& logits, int64_t iters) const override {
    const chess::Board board = parse(fen);
    const std::vector<chess::Move> legal = chess::legal_moves(board);
    std::array<int, 64> map;
    chess::orient(board, &map);
    std::array<int, 64> back;
    for (int sq = 0; sq < 64; ++sq) back[map[sq]] = sq;
    std::vector<int> cells;
    for (int cell = 0; cell < 64; ++cell)
      if (answer[cell] == 1) cells.push_back(cell);
    std::stable_sort(cells.begin(), cells.end(), [&](int x, int y) { return logits[x * 2 + 1] > logits[y * 2 + 1]; });
    if (cells.size() != 2) throw Error("chess: the answer marks " + std::to_string(cells.size()) + " squares, not 2");
    const int a = back[chess::square_of_cell(cells[0])], b = back[chess::square_of_cell(cells[1])];
    auto find = [&](int from, int to) -> const chess::Move* {
      for (const chess::Move& m : legal)
        if (m.from == from && m.to == to && (m.promotion == chess::kNone || m.promotion == chess::kQueen)) return &m;
      return nullptr;
    };
    const chess::Move* move = find(a, b);
    if (!move) move = find(b, a);
    auto own = [&](int sq) { return board.squares[sq] != 0 && chess::color_of(board.squares[sq]) == board.side; };
    const int from = move ? move->from : own(b) && !own(a) ? b : a, to = from == a ? b : a;
    char buf[512];
    std::snprintf(buf, sizeof buf, "position: %s (%s to move, %zu legal moves)\nmodel's move after %lld iterations: %s\nlegal: %s\n",
                  chess::to_fen(board).c_str(), board.side == chess::kWhite ? "white" : "black", legal.size(),
                  static_cast<long long>(iters),
                  move ? chess::to_uci(*move).c_str() : (chess::square_name(from) + chess::square_name(to)).c_str(),
                  move ? "yes" : "no");
    return buf;
  }
};

}  // namespace

const Task& chess_task() {
  static const Chess t;
  return t;
}

}  // namespace looplab
