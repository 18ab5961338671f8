// looplab: the command line. Parses, dispatches to one subcommand, and turns every bad-input
// error into one line on stderr and exit code 2.
#include <iostream>
#include <vector>

#include "looplab/platform/blas_kernel.h"
#include "looplab/cli/commands.h"
#include "looplab/distributed/environment.h"
#include "looplab/platform/runtime.h"
#include "looplab/tasks/registry.h"
#include "looplab/util/error.h"
#include "looplab/util/list.h"
#include "looplab/cli/suggest.h"

namespace looplab::cli {

std::string default_task() { return all_tasks().front()->name(); }

void add_architecture_options(CLI::App* app, std::string& task, std::string& recall, std::string& norm) {
  app->add_option("--task", task, task_names())->capture_default_str()->check(task_name());
  app->add_option("--recall", recall, join_names(recall_names()))->capture_default_str()->check(recall_name());
  app->add_option("--norm", norm, join_names(norm_names()))->capture_default_str()->check(norm_name());
}

void add_model_options(CLI::App* app, ModelShape& o) {
  o.task = default_task();
  add_architecture_options(app, o.task, o.recall, o.norm);
  app->add_option("--width", o.width, "hidden width d")->capture_default_str();
  app->add_option("--heads", o.heads, "attention heads")->capture_default_str();
  app->add_option("--mlp-ratio", o.mlp_ratio, "MLP hidden = ratio x width")->capture_default_str();
  app->add_option("--blocks", o.blocks, "blocks per iteration (default 1; 15 for fixed)");
  app->add_option("--window", o.window, "neighbourhood attention window, keys per axis (odd; default: the task's, 5, mazes 3)");
}

}  // namespace looplab::cli

int main(int argc, char** argv) {
  using namespace looplab;
  choose_blas_kernel(argv);  // may re-execute looplab with a better BLAS kernel (platform/blas_kernel.h)
  configure_allocator(AllocatorPolicy::kSpeed);
  CLI::App app{"looplab: a laboratory for looped and recurrent models", "looplab"};
  app.require_subcommand(1);
  int threads = 0;
  app.add_option("--threads", threads, "LibTorch threads (default: the available cores, shared by the data-parallel ranks on a host)");
  std::vector<cli::Command> commands;
  try {
    commands = {cli::add_info(app),    cli::add_init(app),    cli::add_forward(app), cli::add_train(app),
                cli::add_eval(app),    cli::add_demo(app),    cli::add_solve(app),   cli::add_analyze(app),
                cli::add_explore(app), cli::add_serve(app),   cli::add_bench(app, threads),   cli::add_sweep(app)};
    // A task whose name, tool or solve option collides with a command or option fails here.
    for (const cli::Command& c : cli::add_task_commands(app, threads)) commands.push_back(c);
  } catch (const CLI::Error& e) {
    std::cerr << "looplab: internal error: the commands cannot be set up: " << e.what() << "\n";
    return 2;
  }
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (args.empty()) std::cout << cli::command_list(app);
    const std::string why = cli::explain_parse_error(app, args, e);
    std::cerr << "looplab: error: " << why << (why == e.what() ? " (run with --help for usage)" : "") << "\n";
    return 2;
  }
  try {
    threads = configure_threads(threads > 0 ? threads : default_thread_count());
    for (const auto& c : commands)
      if (c.app->parsed()) c.run();
  } catch (const OptionError& e) {  // the library names the option as in code, the user typed the flag
    std::cerr << "looplab: error: " << e.as_flag() << "\n";
    return 2;
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
