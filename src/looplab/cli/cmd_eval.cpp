// looplab eval: accuracy against iterations per split, the relative step and how many answers
// are unchanged from the previous iteration, written to DIR/eval.json with a compact table.
// With --early-exit or --anderson: the cheaper evaluation of eval/accelerated.h instead (block
// evaluations, time, accuracy at each example's convergence), written to
// DIR/eval_accelerated.json.
#include <cstdio>
#include <iostream>

#include "looplab/cli/commands.h"
#include "looplab/run/run_dir.h"
#include "looplab/stages/stages.h"
#include "looplab/util/error.h"
#include "looplab/util/list.h"

namespace looplab::cli {

namespace {

struct Options {
  std::string dir, splits, iters;
  EvalRunOptions eval;  // run/stage_options.h: the options and their defaults
  int64_t anderson = 0;
  double early_exit = 0;
  bool json = false;
};

void run(Options o) {
  if (!o.iters.empty()) std::tie(o.eval.first, o.eval.last) = parse_range(o.iters, "iters");
  if (!o.splits.empty()) o.eval.splits = split_list(o.splits);
  const int64_t last = o.eval.last;
  if (o.eval.batch < 1 || o.eval.count < 0) throw Error("--batch must be >= 1 and --count >= 0");
  if (o.early_exit < 0 || o.anderson < 0) throw Error("--early-exit and --anderson must be >= 0");
  const std::vector<std::string>& order = o.eval.splits;
  const RunDir run(o.dir);
  if (o.early_exit == 0 && o.anderson == 0) {
    const EvalReport plain = evaluate_run(o.dir, o.eval);
    if (o.json) {
      std::cout << nlohmann::json(plain).dump(2) << "\n";
      return;
    }
    std::cout << to_text(plain, order);
    std::printf("wrote %s\n", run.file(RunDir::kEval).c_str());
    return;
  }
  FixedPointOptions fp;
  fp.max_iters = last;
  fp.tolerance = o.early_exit;
  fp.anderson = o.anderson;
  const AcceleratedReport fast = evaluate_run_accelerated(o.dir, o.eval, fp);
  const std::string file = run.file(RunDir::kEvalAccelerated);
  if (o.json) {
    std::cout << nlohmann::json(fast).dump(2) << "\n";
    return;
  }
  std::cout << to_text(fast, order);
  std::printf("wrote %s\n", file.c_str());
}

}  // namespace

Command add_eval(CLI::App& parent) {
  auto* app = parent.add_subcommand("eval", "Accuracy against iterations on val and hard data");
  auto o = std::make_shared<Options>();
  EvalRunOptions& e = o->eval;
  app->add_option("dir", o->dir, "run or model directory")->required();
  app->add_option("--split", o->splits, "comma-separated splits: train, val, hard")->default_str(join(e.splits, ","));
  app->add_option("--iters", o->iters, "iterations: FIRST:LAST, or LAST (from 1)")
      ->default_str(std::to_string(e.first) + ":" + std::to_string(e.last));
  app->add_option("--weights", e.weights, "final (the last epoch's, as the paper reports) or best (the best val epoch's)")->capture_default_str();
  app->add_option("--count", e.count, "use only the first N examples of each split (0: all)")->capture_default_str();
  app->add_option("--batch", e.batch, "examples per batch")->capture_default_str();
  app->add_option("--device", e.device, "cpu, cuda or cuda:N")->capture_default_str();
  app->add_option("--dtype", e.dtype,
                  "float32, float64 or bfloat16 (bfloat16: faster on CPUs with AVX512-BF16; relative steps stop "
                  "near 6e-3, so keep --early-exit above that)")->capture_default_str();
  app->add_option("--precision", e.precision,
                  "float32 or bf16-mixed (bfloat16 products over float32 weights; default: the run's training precision)");
  app->add_flag("--json", o->json, "print the report to stdout instead of the table");
  app->add_option("--early-exit", o->early_exit,
                  "per-example early exit: stop an example once ||x_{t+1}-x_t||/||x_t|| < TOL (it has converged); "
                  "its answer is the one at its convergence (0: off)");
  app->add_option("--anderson", o->anderson,
                  "Anderson acceleration of the fixed-point iteration with memory M (type II, safeguarded; 0: off)");
  return {app, [o] { run(*o); }};
}

}  // namespace looplab::cli
