// looplab solve: run a trained model on one query of its task (a puzzle, a position: each task
// names its option, tasks/task.h) and show the task's printout of the answer and when the answer
// stopped changing.
#include <cstdio>
#include <map>

#include "looplab/cli/commands.h"
#include "looplab/eval/evaluate.h"
#include "looplab/run/model_dir.h"
#include "looplab/run/run_dir.h"
#include "looplab/runtime.h"
#include "looplab/tasks/registry.h"
#include "looplab/util/error.h"
#include "looplab/util/list.h"

namespace looplab::cli {

Command add_solve(CLI::App& parent) {
  auto* app = parent.add_subcommand("solve", "Run a trained model on one query of its task");
  struct Options {
    std::string dir, weights = "final", device = "cpu";
    int64_t iters = 100;
    std::map<std::string, std::string> queries;  // task name -> the query given (at most one)
  };
  auto o = std::make_shared<Options>();
  app->add_option("dir", o->dir, "run or model directory")->required();
  std::vector<CLI::Option*> query_options;
  std::map<std::string, std::string> flag_of;  // task name -> its option's name
  for (const Task* t : all_tasks()) {
    const SolveOption q = t->solve_option();
    if (q.name.empty()) continue;
    query_options.push_back(app->add_option("--" + q.name, o->queries[t->name()], q.help));
    flag_of[t->name()] = "--" + q.name;
  }
  for (size_t i = 0; i < query_options.size(); ++i)
    for (size_t j = i + 1; j < query_options.size(); ++j) query_options[i]->excludes(query_options[j]);
  app->add_option("--iters", o->iters, "iterations to run")->capture_default_str();
  app->add_option("--weights", o->weights, "final (the last epoch's, as the paper reports) or best (the best val epoch's)")->capture_default_str();
  app->add_option("--device", o->device, "cpu, cuda or cuda:N")->capture_default_str();
  return {app, [o, flag_of] {
            if (o->iters < 1) throw Error("--iters must be >= 1");
            std::string want, query;
            std::vector<std::string> flags;
            for (const auto& [name, text] : o->queries) {
              flags.push_back(flag_of.at(name));
              if (!text.empty()) want = name, query = text;
            }
            if (want.empty()) throw Error("give one of: " + join(flags));
            LoopedTransformer model =
                load_model(o->dir, parse_device(o->device), torch::kFloat32, RunDir(o->dir).weights(o->weights));
            const std::string& have = model->config().task;
            if (have != want)
              throw Error(o->dir + ": a " + have + " model; " + flag_of.at(want) + " needs a " + want + " model");
            model->eval();
            std::printf("%s", solve_query(*model, query, o->iters).c_str());
          }};
}

}  // namespace looplab::cli
