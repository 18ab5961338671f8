// looplab solve: run a trained model on one sudoku puzzle (--puzzle) or chess position (--fen)
// and show its answer, whether the answer is valid, and when the prediction stopped changing.
#include <cstdio>

#include "looplab/cli/commands.h"
#include "looplab/data/splits.h"
#include "looplab/eval/evaluate.h"
#include "looplab/model/model_dir.h"
#include "looplab/runtime.h"
#include "looplab/tasks/chess/puzzles.h"
#include "looplab/tasks/sudoku/solver.h"
#include "looplab/train/trainer.h"
#include "looplab/util/error.h"

namespace looplab::cli {

namespace {

void print_settling(const PredictionTrace& trace, int64_t iters) {
  if (trace.settled_at < iters || iters == 1)
    std::printf("prediction unchanged from iteration %lld on\n", static_cast<long long>(trace.settled_at));
  else
    std::printf("prediction still changing at iteration %lld\n", static_cast<long long>(iters));
}

void solve_sudoku(LoopedTransformerImpl& model, const std::string& text, int64_t iters) {
  const sudoku::Grid question = sudoku::parse_grid_or_throw(text, "--puzzle");
  torch::Tensor input = torch::zeros({81, 10});
  fill_sudoku_input(question, input.data_ptr<float>());
  const PredictionTrace trace = trace_prediction(model, input, iters);
  sudoku::Grid answer{};
  for (int c = 0; c < 81; ++c) answer[c] = static_cast<uint8_t>(trace.predictions.back()[c]);
  std::string why;
  const bool valid = sudoku::is_solution_of(question, answer, &why);
  const sudoku::SolveResult solver = sudoku::solve(question, 2);
  int wrong = 0;
  for (int c = 0; c < 81; ++c) wrong += solver.solutions >= 1 && answer[c] != solver.solution[c];
  std::printf("puzzle (%d clues; the solver needs %lld backtracks%s):\n%s\n", sudoku::clue_count(question),
              static_cast<long long>(solver.backtracks),
              solver.solutions == 0 ? ", no solution" : solver.solutions > 1 ? ", several solutions" : "",
              sudoku::to_pretty(question).c_str());
  std::printf("model's answer after %lld iterations:\n%s\n", static_cast<long long>(iters),
              sudoku::to_pretty(answer).c_str());
  std::printf("valid solution: %s%s\n", valid ? "yes" : "no (", valid ? "" : (why + ")").c_str());
  if (solver.solutions == 1) std::printf("cells differing from the solver's solution: %d of 81\n", wrong);
  print_settling(trace, iters);
}

void solve_chess(LoopedTransformerImpl& model, const std::string& fen, int64_t iters) {
  const chess::Board board = chess::parse_fen_or_throw(fen, "--fen");
  const std::vector<chess::Move> legal = chess::legal_moves(board);
  if (legal.empty()) throw Error("--fen: the side to move has no legal move");
  std::array<int, 64> map;
  const chess::Board oriented = chess::orient(board, &map);
  std::array<int8_t, 64> pieces;
  for (int sq = 0; sq < 64; ++sq) pieces[sq] = oriented.squares[sq];
  torch::Tensor input = torch::zeros({64, 12});
  fill_chess_input(pieces, input.data_ptr<float>());
  const PredictionTrace trace = trace_prediction(model, input, iters);
  // The two squares with the largest class-1 logits, back in the board's own orientation.
  std::array<int, 64> back;
  for (int sq = 0; sq < 64; ++sq) back[map[sq]] = sq;
  const torch::Tensor top = std::get<1>(trace.last_logits.select(-1, 1).topk(2));
  const int a = back[top[0].item<int64_t>()], b = back[top[1].item<int64_t>()];
  // The move goes from the square holding a piece of the side to move; a promotion is taken
  // as a queen's.
  auto find = [&](int from, int to) -> const chess::Move* {
    for (const chess::Move& m : legal)
      if (m.from == from && m.to == to && (m.promotion == chess::kNone || m.promotion == chess::kQueen)) return &m;
    return nullptr;
  };
  const chess::Move* move = find(a, b);
  if (!move) move = find(b, a);
  auto own = [&](int sq) { return board.squares[sq] != 0 && chess::color_of(board.squares[sq]) == board.side; };
  const int from = move ? move->from : own(b) && !own(a) ? b : a, to = from == a ? b : a;
  std::printf("position: %s (%s to move, %zu legal moves)\n", chess::to_fen(board).c_str(),
              board.side == chess::kWhite ? "white" : "black", legal.size());
  std::printf("model's move after %lld iterations: %s\n", static_cast<long long>(iters),
              move ? chess::to_uci(*move).c_str() : (chess::square_name(from) + chess::square_name(to)).c_str());
  std::printf("legal: %s\n", move ? "yes" : "no");
  print_settling(trace, iters);
}

}  // namespace

Command add_solve(CLI::App& parent) {
  auto* app = parent.add_subcommand("solve", "Run a trained model on one sudoku puzzle (--puzzle) or chess position (--fen)");
  struct Options {
    std::string dir, puzzle, fen, weights = "best", device = "cpu";
    int64_t iters = 100;
  };
  auto o = std::make_shared<Options>();
  app->add_option("dir", o->dir, "run or model directory")->required();
  auto* puzzle = app->add_option("--puzzle", o->puzzle, "sudoku: 81 characters, '.' or '0' for a blank");
  auto* fen = app->add_option("--fen", o->fen, "chess: the position in which the model must move (FEN)");
  puzzle->excludes(fen);
  app->add_option("--iters", o->iters, "iterations to run")->capture_default_str();
  app->add_option("--weights", o->weights, "best or latest")->capture_default_str();
  app->add_option("--device", o->device, "cpu, cuda or cuda:N")->capture_default_str();
  return {app, [o] {
            if (o->iters < 1) throw Error("--iters must be >= 1");
            if (o->puzzle.empty() && o->fen.empty()) throw Error("give --puzzle (sudoku) or --fen (chess)");
            const std::string weights = weights_file(o->dir, o->weights);
            LoopedTransformer model = load_model(o->dir, parse_device(o->device), torch::kFloat32, weights);
            const std::string want = o->puzzle.empty() ? "chess" : "sudoku";
            if (model->config().task != want)
              throw Error(o->dir + ": a " + model->config().task + " model; " +
                          (want == "sudoku" ? "--puzzle" : "--fen") + " needs a " + want + " model");
            model->eval();
            if (want == "sudoku")
              solve_sudoku(*model, o->puzzle, o->iters);
            else
              solve_chess(*model, o->fen, o->iters);
          }};
}

}  // namespace looplab::cli
