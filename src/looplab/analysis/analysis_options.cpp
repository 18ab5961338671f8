#include "looplab/analysis/analysis_options.h"

namespace looplab {

const OptionTable<AnalyzeRunOptions>& analyze_option_table() {
  using A = AnalyzeRunOptions;
  static const OptionTable<A> table = {
      option("split", &A::splits, "comma-separated splits: train, val, hard", some_of({"train", "val", "hard"}))
          .was("splits"),
      option("count", &A::count, "examples per split for convergence and accuracy", at_least<int64_t>(1)),
      option_at<A>("iters", [](A& a) -> int64_t& { return a.analysis.convergence.max_iters; }, "iterations to run (MAX)",
                   at_least<int64_t>(1)),
      option_at<A>("tolerance", [](A& a) -> double& { return a.analysis.convergence.tolerance; },
                   "an example's relative step ||x_{t+1}-x_t||/||x_t|| below which it has converged", positive())
          .was("tol"),
      option_at<A>("detail", [](A& a) -> int64_t& { return a.analysis.detail_count; },
                   "how many of the examples get the Jacobian analyses (radius, sensitivity, init independence)",
                   at_least<int64_t>(0)),
      option_at<A>("arnoldi-steps", [](A& a) -> int64_t& { return a.analysis.arnoldi_steps; },
                   "largest Krylov space for the spectral radius", at_least<int64_t>(1)),
      option_at<A>("arnoldi-tolerance", [](A& a) -> double& { return a.analysis.arnoldi_tolerance; }, "Arnoldi stops once ||A y - lambda y|| < it x |lambda|", positive()),
      option_at<A>("seed", [](A& a) -> uint64_t& { return a.analysis.seed; }, "sensitivity directions and initial noise"),
      option("weights", &A::weights,
             "final (the last epoch's, as the paper reports), best (the best val epoch's) or raw (with --ema, the "
             "trained weights rather than their average; checked by run/run_folder.h's RunFolder::weights)"),
      option_at<A>("batch", [](A& a) -> int64_t& { return a.analysis.batch; }, "examples per batch",
                   at_least<int64_t>(1)),
      option("device", &A::device, "cpu, cuda or cuda:N").command_line_only(),
      option("dtype", &A::dtype, "dtype of the convergence pass (the Jacobian analyses use float64)",
             one_of({"float32", "float64", "bfloat16", "float16"})),
      option("hard-size", &A::hard_size, "mazes: the hard split's maze size (0: the run's), recorded in analysis.json",
             at_least<int64_t>(0))
          .command_line_only(),
  };
  return table;
}

}  // namespace looplab
