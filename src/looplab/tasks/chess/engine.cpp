#include "looplab/tasks/chess/engine.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "looplab/util/error.h"

namespace looplab::chess {

std::string find_engine() {
  // LOOPLAB_ENGINE named the chess engine once; it now chooses looplab's block engine
  // (model/engine/engine.h). A path left in it is said, once, and not used.
  static const bool said = [] {
    const char* old = std::getenv("LOOPLAB_ENGINE");
    if (old && *old && std::string(old) != "plain")
      std::fprintf(stderr, "LOOPLAB_ENGINE='%s' no longer names the chess engine: set LOOPLAB_STOCKFISH to its path\n", old);
    return true;
  }();
  (void)said;
  if (const char* env = std::getenv("LOOPLAB_STOCKFISH"); env && *env) return env;
  if (const char* path = std::getenv("PATH")) {
    std::istringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':'))
      if (!dir.empty() && ::access((dir + "/stockfish").c_str(), X_OK) == 0) return dir + "/stockfish";
  }
  if (::access("/usr/games/stockfish", X_OK) == 0) return "/usr/games/stockfish";
  return "";
}

Engine::Engine(const std::string& path, int multipv) : path_(path) {
  if (path.empty() || ::access(path.c_str(), X_OK) != 0)
    throw Error("chess engine '" + path + "' not found (install Debian's stockfish or set LOOPLAB_STOCKFISH)");
  // A write to an engine that died must fail with EPIPE (our error below), not kill us.
  ::signal(SIGPIPE, SIG_IGN);
  // Close-on-exec: engines start concurrently from several threads, and one must not inherit
  // another's pipe ends (a dead engine's reader would then wait forever instead of seeing EOF).
  // dup2 below gives the child its own 0 and 1 without the flag.
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) throw Error("chess engine: cannot create pipes");
  pid_ = ::fork();
  if (pid_ < 0) throw Error("chess engine: cannot fork");
  if (pid_ == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::close(in[1]);
    ::close(out[0]);
    ::execl(path.c_str(), path.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  to_ = ::fdopen(in[1], "w");
  from_ = ::fdopen(out[0], "r");
  send("uci");
  wait_for("uciok");
  send("setoption name Threads value 1");
  send("setoption name Hash value 1");  // small: cleared before every fresh search
  send("setoption name MultiPV value " + std::to_string(multipv));
  send("isready");
  wait_for("readyok");
}

Engine::~Engine() {
  if (to_) {
    std::fputs("quit\n", to_);
    std::fclose(to_);
  }
  if (from_) std::fclose(from_);
  if (pid_ > 0) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == 0) {
      ::usleep(100000);
      if (::waitpid(pid_, &status, WNOHANG) == 0) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
      }
    }
  }
}

void Engine::send(const std::string& line) {
  if (std::fputs((line + "\n").c_str(), to_) < 0 || std::fflush(to_) != 0)
    throw Error("chess engine '" + path_ + "' stopped (write failed)");
}

bool Engine::read_line(std::string& line) {
  line.clear();
  for (int c; (c = std::fgetc(from_)) != EOF;) {
    if (c == '\n') return true;
    line += static_cast<char>(c);
  }
  return !line.empty();
}

void Engine::wait_for(const std::string& token) {
  std::string line;
  while (read_line(line))
    if (line.rfind(token, 0) == 0) return;
  throw Error("chess engine '" + path_ + "' stopped before answering '" + token + "'");
}

void Engine::new_game() { send("ucinewgame"); }

std::vector<EngineLine> Engine::search(const std::string& fen, int depth, bool fresh) {
  if (fresh) new_game();
  send("position fen " + fen);
  send("go depth " + std::to_string(depth));
  std::vector<EngineLine> lines;
  std::string line;
  while (read_line(line)) {
    if (line.rfind("bestmove", 0) == 0) return lines;
    if (line.rfind("info ", 0) != 0 || line.find(" pv ") == std::string::npos) continue;
    std::istringstream in(line);
    std::string word;
    EngineLine l;
    bool bound = false;
    while (in >> word) {
      if (word == "depth") in >> l.depth;
      else if (word == "multipv") in >> l.multipv;
      else if (word == "score") {
        std::string kind;
        in >> kind >> l.score;
        l.mate = kind == "mate";
      } else if (word == "lowerbound" || word == "upperbound") bound = true;
      else if (word == "pv") {
        while (in >> word) l.pv.push_back(word);
      }
    }
    if (!bound && !l.pv.empty()) lines.push_back(l);
  }
  throw Error("chess engine '" + path_ + "' stopped during a search");
}

std::string Engine::best_move(const std::string& fen, int depth, bool fresh) {
  const auto lines = search(fen, depth, fresh);
  std::string best;
  int best_depth = -1;
  for (const auto& l : lines)
    if (l.multipv == 1 && l.depth >= best_depth) best = l.pv[0], best_depth = l.depth;
  return best;
}

}  // namespace looplab::chess
