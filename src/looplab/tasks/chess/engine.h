// A UCI chess engine (Stockfish) as a child process, driven over pipes: set options, search a
// position to a fixed depth, read back the principal variations per depth. Fixed depth and one
// thread make its answers a function of the searches since the last new_game() (which clears
// the hash and the search history), so a caller that starts each unit of work with new_game()
// gets reproducible answers.
// No LibTorch here.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace looplab::chess {

struct EngineLine {
  int depth = 0, multipv = 1;
  bool mate = false;
  int score = 0;  // centipawns, or moves to mate (negative: being mated), for the side to move
  std::vector<std::string> pv;
};

class Engine {
 public:
  // Starts `path` (e.g. /usr/games/stockfish); throws looplab::Error if it does not speak UCI.
  Engine(const std::string& path, int multipv);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Clears the hash table and the search history (UCI `ucinewgame`).
  void new_game();
  // Every "info" line with a pv of a search of `fen` to `depth`, in the engine's order.
  // fresh: new_game() first, so the search at every depth is the engine's own, uninformed by
  // earlier searches (a warm hash hands shallow depths the deep answer).
  std::vector<EngineLine> search(const std::string& fen, int depth, bool fresh = true);
  // The engine's best move at `depth`.
  std::string best_move(const std::string& fen, int depth, bool fresh = true);

 private:
  void send(const std::string& line);
  bool read_line(std::string& line);
  void wait_for(const std::string& token);
  std::string path_;
  int pid_ = -1;
  FILE* to_ = nullptr;
  FILE* from_ = nullptr;
};

// The path of the engine to use: $LOOPLAB_STOCKFISH, else stockfish on PATH, else
// /usr/games/stockfish (Debian's package); empty if none exists.
std::string find_engine();

}  // namespace looplab::chess
