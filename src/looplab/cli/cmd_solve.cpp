// looplab solve: run a trained model on one sudoku puzzle and show its answer, whether the
// answer is a valid solution, and when the prediction stopped changing.
#include <cstdio>

#include "looplab/cli/commands.h"
#include "looplab/eval/evaluate.h"
#include "looplab/model/model_dir.h"
#include "looplab/runtime.h"
#include "looplab/tasks/sudoku/solver.h"
#include "looplab/train/trainer.h"
#include "looplab/util/error.h"

namespace looplab::cli {

Command add_solve(CLI::App& parent) {
  auto* app = parent.add_subcommand("solve", "Run a trained model on one puzzle (sudoku: --puzzle)");
  struct Options {
    std::string dir, puzzle, weights = "best", device = "cpu";
    int64_t iters = 100;
  };
  auto o = std::make_shared<Options>();
  app->add_option("dir", o->dir, "run or model directory")->required();
  app->add_option("--puzzle", o->puzzle, "sudoku: 81 characters, '.' or '0' for a blank")->required();
  app->add_option("--iters", o->iters, "iterations to run")->capture_default_str();
  app->add_option("--weights", o->weights, "best or latest")->capture_default_str();
  app->add_option("--device", o->device, "cpu, cuda or cuda:N")->capture_default_str();
  return {app, [o] {
            if (o->iters < 1) throw Error("--iters must be >= 1");
            if (o->weights != "best" && o->weights != "latest")
              throw Error("--weights '" + o->weights + "': expected best or latest");
            const sudoku::Grid question = sudoku::parse_grid_or_throw(o->puzzle, "--puzzle");
            std::string weights = o->weights == "best" ? kBestWeightsFile : kWeightsFile;
            if (o->weights == "best" && !std::filesystem::exists(o->dir + "/" + weights)) weights = kWeightsFile;
            LoopedTransformer model = load_model(o->dir, parse_device(o->device), torch::kFloat32, weights);
            if (model->config().task != "sudoku")
              throw Error(o->dir + ": a " + model->config().task + " model; --puzzle needs a sudoku model");
            model->eval();
            torch::Tensor input = torch::zeros({81, 10});
            for (int c = 0; c < 81; ++c) input[c][question[c]] = 1;
            const PredictionTrace trace = trace_prediction(*model, input, o->iters);

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
            std::printf("model's answer after %lld iterations:\n%s\n", static_cast<long long>(o->iters),
                        sudoku::to_pretty(answer).c_str());
            std::printf("valid solution: %s%s\n", valid ? "yes" : "no (", valid ? "" : (why + ")").c_str());
            if (solver.solutions == 1) std::printf("cells differing from the solver's solution: %d of 81\n", wrong);
            if (trace.settled_at < o->iters || o->iters == 1)
              std::printf("prediction unchanged from iteration %lld on\n", static_cast<long long>(trace.settled_at));
            else
              std::printf("prediction still changing at iteration %lld\n", static_cast<long long>(o->iters));
          }};
}

}  // namespace looplab::cli
