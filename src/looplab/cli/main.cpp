// looplab: the command line. Parses, dispatches to one subcommand, and turns every bad-input
// error into one line on stderr and exit code 2.
#include <iostream>
#include <vector>

#include "looplab/cli/cmd_analyze.h"
#include "looplab/cli/cmd_explore.h"
#include "looplab/cli/cmd_serve.h"
#include "looplab/cli/commands.h"
#include "looplab/model/config.h"
#include "looplab/runtime.h"
#include "looplab/tasks/task_spec.h"
#include "looplab/util/error.h"

namespace looplab::cli {

void add_model_options(CLI::App* app, ModelOptions& o) {
  app->add_option("--task", o.task, "prefix-sums, sudoku or chess")->capture_default_str();
  app->add_option("--recall", o.recall, "none, external, internal or fixed")->capture_default_str();
  app->add_option("--norm", o.norm, "pre, peri, post or gru")->capture_default_str();
  app->add_option("--width", o.width, "hidden width d")->capture_default_str();
  app->add_option("--heads", o.heads, "attention heads")->capture_default_str();
  app->add_option("--mlp-ratio", o.mlp_ratio, "MLP hidden = ratio x width")->capture_default_str();
  app->add_option("--blocks", o.blocks, "blocks per iteration (default 1; 15 for fixed)");
  app->add_option("--window", o.window, "neighbourhood attention window (odd; local-attention tasks)")
      ->capture_default_str();
}

ModelConfig model_config(const ModelOptions& o) {
  ModelConfig c = default_config(o.task, parse_recall(o.recall), parse_norm(o.norm), o.width);
  c.heads = o.heads;
  c.mlp_ratio = o.mlp_ratio;
  if (o.blocks != 0) c.blocks = o.blocks;
  c.window = o.window;
  validate(c);
  return c;
}

}  // namespace looplab::cli

int main(int argc, char** argv) {
  using namespace looplab;
  configure_allocator(AllocatorPolicy::kSpeed);
  CLI::App app{"looplab: a laboratory for looped and recurrent models"};
  app.require_subcommand(1);
  int threads = 0;
  app.add_option("--threads", threads, "LibTorch threads (default: every available core)");
  std::vector<cli::Command> commands = {cli::add_info(app), cli::add_init(app), cli::add_forward(app),
                                        cli::add_train(app), cli::add_eval(app),   cli::add_data(app),
                                        cli::add_demo(app),  cli::add_sudoku(app), cli::add_solve(app),
                                        cli::add_bench(app),  cli::add_explore(app), cli::add_analyze(app),
                                        cli::add_serve(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "looplab: error: " << e.what() << " (run with --help for usage)\n";
    return 2;
  }
  try {
    configure_threads(threads);
    for (const auto& c : commands)
      if (c.app->parsed()) c.run();
  } catch (const Error& e) {
    std::cerr << "looplab: error: " << e.what() << "\n";
    return 2;
  } catch (const c10::Error& e) {
    // LibTorch's own checks: keep the first line, the rest is a C++ backtrace.
    std::string what = e.what_without_backtrace();
    std::cerr << "looplab: error: " << what.substr(0, what.find('\n')) << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "looplab: error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
