// looplab eval: accuracy against iterations per split, the relative step and how many answers
// are unchanged from the previous iteration, written to DIR/eval.json with a compact table.
// With --early-exit or --anderson: the cheaper evaluation of eval/accelerated.h instead (block
// evaluations, time, accuracy at each example's convergence), written to
// DIR/eval_accelerated.json. With --halt: when each example stops by each halting rule
// (DIR/eval_halt.json); with --scaling: the halting rules on the task's difficulty levels
// (DIR/eval_scaling.json). The flags are eval/eval_options.h's table.
#include <iostream>

#include "looplab/cli/commands.h"
#include "looplab/stages/stages.h"

namespace looplab::cli {

Command add_eval(CLI::App& parent) {
  auto* app = parent.add_subcommand("eval", "Accuracy against iterations on val and hard data");
  struct Options {
    std::string dir;
    EvalRunOptions eval;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  app->add_option("dir", o->dir, "run or model folder")->required();
  static const EvalRunOptions defaults;
  add_option_flags<EvalRunOptions>(
      app, eval_option_table(), [o](const auto& option, const OptionValue& v) { option.set(o->eval, v); }, &defaults);
  app->add_flag("--json", o->json, "print the report to stdout instead of the table");
  return {app, [o] { std::cout << run_evaluation(o->dir, o->eval, o->json); }};
}

}  // namespace looplab::cli
