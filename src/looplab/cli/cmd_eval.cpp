// looplab eval: accuracy against iterations per split, the relative step and how many answers
// are unchanged from the previous iteration, written to DIR/eval.json with a compact table.
// With --early-exit or --anderson: the cheaper evaluation of eval/accelerated.h instead (block
// evaluations, time, accuracy at each example's convergence), written to
// DIR/eval_accelerated.json. With --halt: when each example stops by each halting rule
// (DIR/eval_halt.json); with --scaling: the halting rules on the task's difficulty levels
// (DIR/eval_scaling.json).
#include <iostream>

#include "looplab/cli/commands.h"
#include "looplab/stages/stages.h"
#include "looplab/util/list.h"

namespace looplab::cli {

Command add_eval(CLI::App& parent) {
  auto* app = parent.add_subcommand("eval", "Accuracy against iterations on val and hard data");
  struct Options {
    std::string dir, splits, iters, halt;
    EvalRunOptions eval;  // run/stage_options.h: the options and their defaults
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  EvalRunOptions& e = o->eval;
  app->add_option("dir", o->dir, "run or model folder")->required();
  app->add_option("--split", o->splits, "comma-separated splits: train, val, hard")->default_str(join(e.splits, ","));
  app->add_option("--iters", o->iters, "iterations: FIRST:LAST, or LAST (from 1)")
      ->default_str(std::to_string(e.first) + ":" + std::to_string(e.last));
  app->add_option("--weights", e.weights, "final (the last epoch's, as the paper reports), best (the best val epoch's) or raw (with --ema, the trained weights rather than their average)")->capture_default_str();
  app->add_option("--count", e.count, "use only the first N examples of each split (0: all)")->capture_default_str();
  app->add_option("--batch", e.batch, "examples per batch")->capture_default_str();
  app->add_option("--device", e.device, "cpu, cuda or cuda:N")->capture_default_str();
  app->add_option("--dtype", e.dtype,
                  "float32, float64 or bfloat16 (bfloat16: faster on CPUs with AVX512-BF16; relative steps stop "
                  "near 6e-3, so keep --early-exit above that)")->capture_default_str();
  app->add_option("--precision", e.precision,
                  "float32 or bf16-mixed (bfloat16 products over float32 weights; default: the run's training precision)");
  app->add_flag("--json", o->json, "print the report to stdout instead of the table");
  app->add_option("--early-exit", e.tolerance,
                  "per-example early exit: stop an example once ||x_{t+1}-x_t||/||x_t|| < TOL (it has converged); "
                  "its answer is the one at its convergence (0: off)");
  app->add_option("--anderson", e.anderson,
                  "Anderson acceleration of the fixed-point iteration with memory M (type II, safeguarded; 0: off)");
  app->add_option("--halt", o->halt, "halting rules, comma-separated: learned (the halting head), confidence (the least "
                  "confident position's top probability), fixed-point (the relative step); writes DIR/eval_halt.json");
  app->add_option("--halt-threshold", e.halt_threshold,
                  "the threshold of the one --halt rule (default: learned 0.5, confidence 0.9, fixed-point 1e-4)");
  app->add_flag("--scaling", e.scaling,
                "test-time compute against difficulty: every halting rule on the task's difficulty levels (prefix "
                "sums: 32 to 2,048 bits, sudoku and chess: rating bands; --count per level, default 100), written to "
                "DIR/eval_scaling.json");
  return {app, [o] {
            EvalRunOptions e = o->eval;
            if (!o->iters.empty()) std::tie(e.first, e.last) = parse_range(o->iters, "iters");
            if (!o->splits.empty()) e.splits = split_list(o->splits);
            if (!o->halt.empty()) e.halt = split_list(o->halt);
            std::cout << run_evaluation(o->dir, e, o->json);
          }};
}

}  // namespace looplab::cli
