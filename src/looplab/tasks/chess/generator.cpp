#include "looplab/tasks/chess/generator.h"

#include <cstdio>
#include <map>
#include <memory>

#include <unistd.h>

#include "looplab/tasks/chess/engine.h"
#include "looplab/util/error.h"
#include "looplab/util/parallel.h"
#include "looplab/util/random.h"

namespace looplab::chess {

namespace {

const char* kStartFen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
constexpr int kPlayDepth = 1;        // the engine's moves in self-play
constexpr int kRandomPercent = 40;   // the share of self-play moves drawn at random
constexpr int kClearGap = 200;       // centipawns between the best and the second-best move
constexpr int kMaxAttempts = 500;    // games
constexpr int kPlayOnPlies = 16;     // plies of one game after its start whose positions are tried

Move pick(const Board& b, const std::string& uci) {
  Move m;
  std::string why;
  if (!parse_uci(b, uci, m, why)) throw Error("chess engine returned " + why);
  return m;
}

// Value of a line for the side to move, with mates beyond any centipawn score.
int value(const EngineLine& l) {
  if (!l.mate) return l.score;
  return l.score > 0 ? 100000 - l.score : -100000 - l.score;
}

}  // namespace

int rating_for_depth(int depth) { return 1000 + 150 * (depth - 1); }

PuzzleRow generate_chess_puzzle(Engine& engine, uint64_t seed, uint64_t index, int depth) {
  Random rng(Random::stream_seed(seed, index));
  // Self-play moves are searched without clearing the engine first (the clear cost more than
  // the depth-1 search); clearing once per puzzle keeps every answer a function of this
  // puzzle's own searches, so the file is the same for any thread count. The candidate
  // positions are searched fresh: their ratings need uninformed shallow depths.
  engine.new_game();
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    // Self-play from the start: a mixture of engine moves and random ones, so the positions
    // are varied and the random moves leave tactics behind.
    Board b = parse_fen_or_throw(kStartFen, "start");
    const int plies = static_cast<int>(rng.uniform_int(10, 70));
    Board before;
    Move opponent;
    bool opponent_random = false;
    auto play = [&]() {  // one self-play move; false when the game is over
      const std::vector<Move> moves = legal_moves(b);
      if (moves.empty()) return false;
      const bool random = rng.uniform_int(0, 99) < kRandomPercent;
      const Move m = random ? moves[rng.uniform_int(0, static_cast<int64_t>(moves.size()) - 1)]
                            : pick(b, engine.best_move(to_fen(b), kPlayDepth, /*fresh=*/false));
      before = b;
      opponent = m;
      opponent_random = random;
      b = make_move(b, m);
      return true;
    };
    bool ended = false;
    for (int ply = 0; ply <= plies && !ended; ++ply) ended = !play();
    // Play on and try the positions that follow a random move, the opponent's mistake that a
    // puzzle punishes: most positions have no clear best move, and playing on is far cheaper
    // than a new game (docs/chess.md: trying only these made generation 2.2x faster).
    for (int ply = 0; ply < kPlayOnPlies && !ended; ++ply, ended = !play()) {
      if (!opponent_random || legal_moves(b).size() < 2) continue;
      // b is the puzzle's position; `before` and `opponent` are its FEN and Moves[0].
      const std::vector<EngineLine> lines = engine.search(to_fen(b), depth);
      std::map<int, std::string> best_at;  // depth -> first move of the first line
      const EngineLine* first = nullptr;
      const EngineLine* second = nullptr;
      for (const EngineLine& l : lines) {
        if (l.multipv == 1) best_at[l.depth] = l.pv[0];
        if (l.depth == depth) (l.multipv == 1 ? first : second) = &l;
      }
      if (!first || !second) continue;
      const bool mate = first->mate && first->score > 0;
      const bool clear = mate ? !(second->mate && second->score > 0) : value(*first) >= 100 && value(*first) - value(*second) >= kClearGap;
      if (!clear) continue;
      const std::string solution = first->pv[0];
      int found = depth;
      while (found > 1 && best_at.count(found - 1) && best_at[found - 1] == solution) --found;
      PuzzleRow row;
      char id[32];
      std::snprintf(id, sizeof id, "ll%07llu", static_cast<unsigned long long>(index));
      row.id = id;
      row.fen = to_fen(before);
      row.moves = to_uci(opponent) + " " + solution;
      for (size_t k = 1; k < first->pv.size() && k < 4; ++k) row.moves += " " + first->pv[k];
      row.rating = rating_for_depth(found);
      row.rating_deviation = 0;
      row.themes = mate ? "mate mateIn" + std::to_string(first->score) : "advantage";
      row.opening_tags = "";
      row.game_url = "";
      return row;
    }
  }
  throw Error("chess generator: no clear puzzle after " + std::to_string(kMaxAttempts) + " games (index " +
              std::to_string(index) + ")");
}

std::vector<PuzzleRow> generate_chess(int64_t count, uint64_t seed, const ChessGeneratorOptions& options,
                                      const std::function<void(int64_t, int64_t)>& progress) {
  const std::string path = options.engine.empty() ? find_engine() : options.engine;
  if (path.empty()) throw Error("no chess engine found: install Debian's stockfish (apt-get install stockfish) or set LOOPLAB_STOCKFISH");
  if (::access(path.c_str(), X_OK) != 0)
    throw Error("chess engine '" + path + "' not found (install Debian's stockfish or set LOOPLAB_STOCKFISH)");
  if (options.depth < 2 || options.depth > 30) throw Error("chess generator: depth must be in 2..30");
  std::vector<PuzzleRow> out(count);
  for_each_index(
      count, options.threads,
      [&] {
        auto engine = std::make_shared<Engine>(path, 2);  // one engine process per thread
        return [&, engine](int64_t i) {
          out[i] = generate_chess_puzzle(*engine, seed, static_cast<uint64_t>(i), options.depth);
        };
      },
      progress);
  return out;
}

}  // namespace looplab::chess
