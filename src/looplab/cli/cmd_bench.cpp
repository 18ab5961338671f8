// looplab bench block|step|latency|eval (and the tasks' own benchmarks): flags to the options of bench/bench.h, whose
// run_* functions measure and print (bench/run reads their `json: {...}` lines).
#include <memory>
#include <string>

#include "bench/bench.h"
#include "looplab/cli/commands.h"
#include "looplab/tasks/registry.h"
#include "looplab/util/list.h"

namespace looplab::cli {

namespace {

// The options of a synthetic model: block takes its recall and norm, step and latency run an
// external-recall post-norm model.
void add_synthetic_options(CLI::App* app, bench::SyntheticOptions& o, bool architecture) {
  if (architecture) add_architecture_options(app, o.task, o.recall, o.norm);
  else app->add_option("--task", o.task, task_names())->check(task_name())->capture_default_str();
  app->add_option("--positions", o.positions, "prefix sums: tokens per example")->capture_default_str();
  app->add_option("--batch", o.batch, "examples per batch")->capture_default_str();
  app->add_option("--width", o.width, "model width")->capture_default_str();
  app->add_option("--heads", o.heads, "attention heads")->capture_default_str();
  app->add_option("--device", o.device, "cpu, cuda or cuda:N")->capture_default_str();
  app->add_option("--dtype", o.dtype, "float32, float64, bfloat16 or float16")->capture_default_str();
  app->add_option("--precision", o.precision, "float32 or bf16-mixed (bfloat16 products over float32 weights)")
      ->capture_default_str();
}

Command add_bench_block(CLI::App* parent) {
  auto* app = parent->add_subcommand(
      "block", "2048^3 matmul GFLOP/s and one block iteration (default: external recall, paper width, 100 x 81 tokens)");
  auto o = std::make_shared<bench::BlockOptions>();
  add_synthetic_options(app, o->model, true);
  app->add_option("--reps", o->reps, "timed repetitions (median reported)")->capture_default_str();
  return {app, [o] { bench::run_block(*o); }};
}

Command add_bench_step(CLI::App* parent) {
  auto* app = parent->add_subcommand("step", "One training step with fixed n and k (external recall, post norm): time, "
                                             "model FLOP/s, matmul GFLOP/s of the same process, peak RSS");
  auto o = std::make_shared<bench::StepOptions>();
  add_synthetic_options(app, o->model, false);
  app->add_option("--n", o->n, "iterations without gradient")->capture_default_str();
  app->add_option("--k", o->k, "iterations with gradient")->capture_default_str();
  app->add_option("--reps", o->reps, "timed steps (median reported)")->capture_default_str();
  app->add_option("--warmup", o->warmup, "untimed steps first")->capture_default_str();
  app->add_flag("--recompute", o->recompute, "recompute each gradient iteration's activations in the backward pass");
  app->add_flag("--no-matmul", o->no_matmul, "skip the matmul measurement (peak RSS runs)");
  app->add_flag("--count-ops", o->count_ops, "then count the ATen operators of one iteration (3 phases) and one step");
  return {app, [o] { bench::run_step(*o); }};
}

Command add_bench_latency(CLI::App* parent) {
  auto* app = parent->add_subcommand("latency", "Latency of one iteration at batch 1 (inference mode)");
  auto o = std::make_shared<bench::LatencyOptions>();
  add_synthetic_options(app, o->model, false);
  app->add_option("--reps", o->reps, "timed iterations (median reported)")->capture_default_str();
  return {app, [o] { bench::run_latency(*o); }};
}

Command add_bench_eval(CLI::App* parent) {
  auto* app = parent->add_subcommand(
      "eval", "A model folder evaluated by plain iteration, early exit and Anderson: block evaluations, time, "
              "exact accuracy");
  auto o = std::make_shared<bench::EvalOptions>();
  bench::EvalOptions& e = *o;
  app->add_option("dir", e.dir, "model or run folder")->required();
  app->add_option("--split", e.split, "train, val or hard")->capture_default_str();
  app->add_option("--count", e.count, "first N examples of the split")->capture_default_str();
  app->add_option("--batch", e.batch, "examples per batch")->capture_default_str();
  app->add_option("--iters", e.iters, "iterations (block evaluations) per example, at most")->capture_default_str();
  app->add_option("--tolerance,--tol", e.tolerance,
                  "early-exit tolerance on ||x_{t+1}-x_t||/||x_t|| (early and anderson)")
      ->capture_default_str();
  app->add_option("--anderson", e.anderson, "Anderson memory")->capture_default_str();
  app->add_option("--modes", e.modes, "comma-separated: plain, early, anderson")->delimiter(',')->default_str(join(e.modes, ","));
  app->add_option("--weights", e.weights, "final (the last epoch's, as the paper reports), best (the best val epoch's) or raw (with --ema, the trained weights rather than their average)")->capture_default_str();
  app->add_option("--device", e.device, "cpu, cuda or cuda:N")->capture_default_str();
  app->add_option("--dtype", e.dtype, "float32 or float64")->capture_default_str();
  return {app, [o] { bench::run_eval(*o); }};
}

}  // namespace

Command add_bench(CLI::App& parent, const int& threads) {
  auto* app = parent.add_subcommand("bench", "Benchmarks (not tests)");
  std::vector<Command> benches = {add_bench_block(app), add_bench_step(app), add_bench_latency(app), add_bench_eval(app)};
  for (const Task* task : all_tasks())
    for (const Tool& t : task->benchmarks()) benches.push_back(add_tool(app, t, threads));
  return command_group(app, benches);
}

}  // namespace looplab::cli
