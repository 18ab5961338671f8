// looplab solve: run a trained model on one query of its task (a puzzle, a position: each task
// names its option, tasks/task.h) and show the task's printout of the answer and when the answer
// stopped changing.
#include <cstdio>
#include <map>

#include "looplab/cli/commands.h"
#include "looplab/stages/stages.h"
#include "looplab/tasks/registry.h"
#include "looplab/util/error.h"

namespace looplab::cli {

Command add_solve(CLI::App& parent) {
  auto* app = parent.add_subcommand("solve", "Run a trained model on one query of its task");
  struct Options {
    std::string dir, weights = "final", device = "cpu";
    int64_t iters = 100;
    std::map<std::string, std::string> queries;  // task name -> the query given (at most one)
  };
  auto o = std::make_shared<Options>();
  app->add_option("dir", o->dir, "run or model folder")->required();
  // Each task's query option (tasks/task.h); exactly one is given.
  auto* queries = app->add_option_group("query", "one query of the model's task");
  for (const Task* t : all_tasks())
    if (const SolveOption q = t->solve_option(); !q.name.empty())
      queries->add_option("--" + q.name, o->queries[t->name()], q.help);
  queries->require_option(1);
  app->add_option("--iters", o->iters, "iterations to run")->capture_default_str();
  app->add_option("--weights", o->weights, "final (the last epoch's, as the paper reports), best (the best val epoch's) or raw (with --ema, the trained weights rather than their average)")->capture_default_str();
  app->add_option("--device", o->device, "cpu, cuda or cuda:N")->capture_default_str();
  return {app, [o] {
            for (const auto& [task, query] : o->queries)
              if (!query.empty()) return (void)std::printf("%s", solve_run(o->dir, task, query, o->iters, o->weights, o->device).c_str());
            throw Error("the query is empty");
          }};
}

}  // namespace looplab::cli
