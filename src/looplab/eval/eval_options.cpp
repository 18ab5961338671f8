#include "looplab/eval/eval_options.h"

#include "looplab/util/error.h"
#include "looplab/util/list.h"

namespace looplab {

const std::vector<std::string>& halt_rule_names() {
  static const std::vector<std::string> names = {"learned", "confidence", "fixed-point"};
  return names;
}

namespace {

// --iters FIRST:LAST or LAST; a sweep file's `iters = LAST`.
Option<EvalRunOptions> iters_option() {
  Option<EvalRunOptions> o;
  o.key = "iters";
  o.help = "iterations: FIRST:LAST, or LAST (from 1)";
  o.kind = OptionKind::kText;
  o.set = [](EvalRunOptions& e, const OptionValue& v) {
    if (const auto* last = std::get_if<int64_t>(&v)) e.first = 1, e.last = *last;
    else std::tie(e.first, e.last) = parse_range(option_cast<std::string>(v), "iters");
  };
  o.get = [](const EvalRunOptions& e) -> OptionValue { return std::to_string(e.first) + ":" + std::to_string(e.last); };
  o.complaint = [](const EvalRunOptions& e) {
    return e.first >= 1 && e.last >= e.first ? std::string() : std::string(": need 1 <= FIRST <= LAST");
  };
  return o;
}

}  // namespace

const OptionTable<EvalRunOptions>& eval_option_table() {
  using E = EvalRunOptions;
  static const OptionTable<E> table = {
      option("split", &E::splits, "comma-separated splits: train, val, hard", some_of({"train", "val", "hard"}))
          .was("splits"),
      iters_option(),
      option("weights", &E::weights,
             "final (the last epoch's, as the paper reports), best (the best val epoch's) or raw (with --ema, the "
             "trained weights rather than their average; checked by run/run_folder.h's RunFolder::weights)"),
      option("count", &E::count, "use only the first N examples of each split (0: all)", at_least<int64_t>(0)),
      option("batch", &E::batch, "examples per batch", at_least<int64_t>(1)),
      option("device", &E::device, "cpu, cuda or cuda:N").command_line_only(),
      option("dtype", &E::dtype,
             "float32, float64 or bfloat16 (bfloat16: faster on CPUs with AVX512-BF16; relative steps stop near "
             "6e-3, so keep --early-exit above that)",
             one_of({"float32", "float64", "bfloat16", "float16"})),
      option("precision", &E::precision,
             "float32 or bf16-mixed (bfloat16 products over float32 weights; default: the run's training precision)",
             Range<std::string>([](const std::string& p) { return p.empty() ? "" : one_of({"float32", "bf16-mixed"})(p); })),
      option("early-exit", &E::early_exit,
             "per-example early exit: stop an example once ||x_{t+1}-x_t||/||x_t|| < TOL (it has converged); its "
             "answer is the one at its convergence (0: off)",
             at_least(0.0)).command_line_only(),
      option("anderson", &E::anderson,
             "Anderson acceleration of the fixed-point iteration with memory M (type II, safeguarded; 0: off)",
             at_least<int64_t>(0)).command_line_only(),
      option("halt", &E::halt,
             "halting rules, comma-separated: learned (the halting head), confidence (the least confident position's "
             "top probability), fixed-point (the relative step); writes DIR/eval_halt.json",
             each_one_of(halt_rule_names())).command_line_only(),
      option("halt-threshold", &E::halt_threshold,
             "the threshold of the one --halt rule (default: learned 0.5, confidence 0.9, fixed-point 1e-4)",
             at_least(0.0)).command_line_only(),
      option("scaling", &E::scaling,
             "test-time compute against difficulty: every halting rule on the task's difficulty levels (prefix sums: "
             "32 to 2,048 bits, sudoku and chess: rating bands; --count per level, default 100), written to "
             "DIR/eval_scaling.json")
          .command_line_only(),
      option("trace", &E::trace,
             "the answer after every iteration of the first N examples of the one --split given, for the web lab "
             "(a maze's path growing), written to DIR/eval_trace.json (0: off)",
             at_least<int64_t>(0)).command_line_only(),
      option("hard-size", &E::hard_size,
             "mazes: the hard maze size for --scaling (a level beyond 59, e.g. 201) and --trace (0: the run's)",
             at_least<int64_t>(0)).command_line_only(),
  };
  return table;
}

EvalKind eval_kind(const EvalRunOptions& o) {
  const char* accelerated = o.early_exit > 0 ? "--early-exit" : o.anderson > 0 ? "--anderson" : nullptr;
  const char* stopping = o.scaling ? "--scaling" : !o.halt.empty() ? "--halt" : nullptr;
  if (accelerated && stopping)
    throw Error(std::string(stopping) + " and " + accelerated + " ask for two evaluations (" + stopping +
                ": every example runs all iterations and is stopped by the halting rules; " + accelerated +
                ": each example stops at its own convergence): run them as two evaluations");
  if (o.trace > 0) {
    if (const char* other = stopping ? stopping : accelerated)
      throw Error(std::string("--trace and ") + other + " ask for two evaluations: run them as two evaluations");
    return EvalKind::kTrace;
  }
  if (o.scaling) return EvalKind::kScaling;
  if (!o.halt.empty()) return EvalKind::kHalting;
  if (accelerated) return EvalKind::kAccelerated;
  return EvalKind::kCurve;
}

void check(const EvalRunOptions& o) {
  check_options(eval_option_table(), o);
  if (o.halt_threshold > 0 && o.halt.size() != 1) throw OptionError("halt_threshold", " needs exactly one --halt rule");
  const EvalKind kind = eval_kind(o);
  if (o.hard_size > 0 && kind != EvalKind::kScaling && kind != EvalKind::kTrace)
    throw OptionError("hard_size", " goes with --scaling or --trace (eval.json keeps the run's hard split)");
  if (kind == EvalKind::kTrace && o.splits.size() != 1)
    throw OptionError("trace", " traces the examples of one split: give one --split");
}

}  // namespace looplab
