// looplab data: make a task's data from a seed and write it as CSV.
#include <iostream>

#include "looplab/cli/commands.h"
#include "looplab/cli/group.h"
#include "looplab/util/progress.h"
#include "looplab/tasks/chess/generator.h"
#include "looplab/tasks/prefix_sums/prefix_sums.h"
#include "looplab/tasks/sudoku/dataset.h"
#include "looplab/util/error.h"

namespace looplab::cli {

namespace {

Command add_prefix_sums(CLI::App* data) {
  auto* app = data->add_subcommand("prefix-sums", "Random bit strings and their prefix parities (input,target)");
  struct Options {
    int64_t bits = 32, count = 8000;
    uint64_t seed = 0;
    std::string out;
  };
  auto o = std::make_shared<Options>();
  app->add_option("--bits", o->bits, "length of each bit string")->capture_default_str();
  app->add_option("--count", o->count, "number of examples")->capture_default_str();
  app->add_option("--seed", o->seed, "random seed")->capture_default_str();
  app->add_option("--out", o->out, "CSV file to write")->required();
  return {app, [o] {
    if (o->bits < 1 || o->count < 1) throw Error("--bits and --count must be >= 1");
    prefix_sums::write_csv(o->out, prefix_sums::generate(o->bits, o->count, o->seed));
    std::cout << "wrote " << o->count << " examples of " << o->bits << " bits to " << o->out << "\n";
  }};
}

Command add_sudoku(CLI::App* data) {
  auto* app = data->add_subcommand(
      "sudoku", "Minimal puzzles with unique solutions, rated by solver backtracks (sudoku-extreme format)");
  struct Options {
    int64_t count = 60000;
    uint64_t seed = 0;
    int selection = 0;
    std::string out;
  };
  auto o = std::make_shared<Options>();
  app->add_option("--count", o->count, "number of puzzles")->capture_default_str();
  app->add_option("--seed", o->seed, "random seed (the file is the same for any thread count)")->capture_default_str();
  app->add_option("--selection", o->selection,
                  "make every puzzle the hardest of K minimal ones (default: the mixture of docs/sudoku.md)");
  app->add_option("--out", o->out, "CSV file to write")->required();
  return {app, [o] {
    if (o->count < 1) throw Error("--count must be >= 1");
    sudoku::GeneratorOptions options;
    if (o->selection != 0) {
      if (o->selection < 1) throw Error("--selection must be >= 1");
      options.sources = {{"looplab-select" + std::to_string(o->selection), o->selection, 100}};
    }
    options.threads = torch::get_num_threads();
    Progress progress("sudoku puzzles");
    const auto puzzles = sudoku::generate(o->count, o->seed, options, std::ref(progress));
    sudoku::write_csv(o->out, puzzles);
    std::printf("wrote %lld puzzles to %s in %.1f s on %d threads\n", static_cast<long long>(o->count),
                o->out.c_str(), progress.seconds(), options.threads);
    std::cout << sudoku::rating_report(puzzles);
  }};
}

Command add_chess(CLI::App* data) {
  auto* app = data->add_subcommand(
      "chess", "Puzzles from engine analysis of varied self-play, rated by search depth (Lichess format; docs/chess.md)");
  struct Options {
    int64_t count = 1000;
    uint64_t seed = 0;
    int depth = 8;
    std::string out, engine;
  };
  auto o = std::make_shared<Options>();
  app->add_option("--count", o->count, "number of puzzles")->capture_default_str();
  app->add_option("--seed", o->seed, "random seed (the file is the same for any thread count)")->capture_default_str();
  app->add_option("--depth", o->depth, "analysis depth: a solution is rated by the depth it is found at")
      ->capture_default_str();
  app->add_option("--engine", o->engine, "UCI engine (default: $LOOPLAB_ENGINE, stockfish on PATH, /usr/games/stockfish)");
  app->add_option("--out", o->out, "CSV file to write")->required();
  return {app, [o] {
            if (o->count < 1) throw Error("--count must be >= 1");
            chess::ChessGeneratorOptions options;
            options.engine = o->engine;
            options.depth = o->depth;
            options.threads = torch::get_num_threads();
            Progress progress("chess puzzles");
            const auto rows = chess::generate_chess(o->count, o->seed, options, std::ref(progress));
            chess::write_lichess(o->out, rows);
            int64_t easy = 0, hard = 0;
            for (const auto& r : rows) (r.rating < 1600 ? easy : r.rating <= 2000 ? hard : easy) += r.rating <= 2000;
            std::printf("wrote %lld puzzles to %s in %.1f s on %d threads: %lld rated below 1600, %lld rated 1600-2000\n",
                        static_cast<long long>(o->count), o->out.c_str(), progress.seconds(), options.threads,
                        static_cast<long long>(easy), static_cast<long long>(hard));
          }};
}

}  // namespace

Command add_data(CLI::App& parent) {
  auto* app = parent.add_subcommand("data", "Generate a task's data as CSV");
  return command_group(app, {add_prefix_sums(app), add_sudoku(app), add_chess(app)});
}

}  // namespace looplab::cli
