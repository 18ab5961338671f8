#include "looplab/run/run_options.h"

#include <cstdio>
#include <cstdlib>

#include "looplab/util/error.h"
#include "looplab/util/numeric.h"

namespace looplab {

namespace {

using Kind = RunOption::Kind;

int64_t as_int(const OptionValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  throw Error("expected an integer");
}
uint64_t as_unsigned(const OptionValue& v) {
  const int64_t i = as_int(v);
  if (i < 0) throw Error("expected an integer >= 0");
  return static_cast<uint64_t>(i);
}
double as_number(const OptionValue& v) {
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  throw Error("expected a number");
}
const std::string& as_text(const OptionValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  throw Error("expected a string");
}
bool as_flag(const OptionValue& v) {
  if (const auto* b = std::get_if<bool>(&v)) return *b;
  throw Error("expected true or false");
}

template <typename Field>
RunOption int_option(std::string name, std::string help, Field field) {
  return {std::move(name), "", std::move(help), Kind::kInt,
          [field](RunSpec& s, const OptionValue& v) { field(s) = as_int(v); }};
}
template <typename Field>
RunOption unsigned_option(std::string name, std::string help, Field field) {
  return {std::move(name), "", std::move(help), Kind::kUnsigned,
          [field](RunSpec& s, const OptionValue& v) { field(s) = as_unsigned(v); }};
}
template <typename Field>
RunOption number_option(std::string name, std::string help, Field field) {
  return {std::move(name), "", std::move(help), Kind::kNumber,
          [field](RunSpec& s, const OptionValue& v) { field(s) = as_number(v); }};
}
template <typename Field>
RunOption text_option(std::string name, std::string help, Field field) {
  return {std::move(name), "", std::move(help), Kind::kText,
          [field](RunSpec& s, const OptionValue& v) { field(s) = as_text(v); }};
}
template <typename Field>
RunOption flag_option(std::string name, std::string help, Field field) {
  return {std::move(name), "", std::move(help), Kind::kFlag,
          [field](RunSpec& s, const OptionValue& v) { field(s) = as_flag(v); }};
}

RunOption renamed(RunOption o, std::string old_name) {
  o.old_name = std::move(old_name);
  return o;
}

}  // namespace

const std::vector<RunOption>& run_options() {
  // docs/presets.md lists the presets' values.
  static const std::vector<RunOption> options = {
      number_option("lr", "peak learning rate", [](RunSpec& s) -> double& { return s.train.lr; }),
      int_option("epochs", "epochs (with --resume: the new total)", [](RunSpec& s) -> int64_t& { return s.train.epochs; }),
      int_option("cooldown-epoch", "first epoch of the 10x cool-down (paper: 60)",
                 [](RunSpec& s) -> int64_t& { return s.train.cooldown_epoch; }),
      int_option("batch", "batch size", [](RunSpec& s) -> int64_t& { return s.train.batch; }),
      unsigned_option("seed", "seed of initialization, shuffling and n/k draws",
                      [](RunSpec& s) -> uint64_t& { return s.train.seed; }),
      renamed(int_option("training-iters", "T, the training iterations: the most the progressive loss runs",
                         [](RunSpec& s) -> int64_t& { return s.train.training_iters; }),
              "max-iters"),
      number_option("alpha", "progressive-loss weight (1: progressive loss only)",
                    [](RunSpec& s) -> double& { return s.train.alpha; }),
      text_option("dtype", "float32, float64 or bfloat16 (bfloat16 weights and AdamW: docs/performance.md)", [](RunSpec& s) -> std::string& { return s.train.dtype; }),
      text_option("precision",
                  "float32, or bf16-mixed: bfloat16 products under autocast over float32 weights (paper preset: "
                  "bf16-mixed on a CPU with AVX512-BF16 or on CUDA)",
                  [](RunSpec& s) -> std::string& { return s.train.precision; }),
      text_option("gradient",
                  "how the gradient is taken: bptt (the progressive loss), one-step, phantom or implicit "
                  "(docs/training-methods.md)",
                  [](RunSpec& s) -> std::string& { return s.train.gradient; }),
      int_option("phantom-steps", "phantom: damped steps with gradient from the fixed point",
                 [](RunSpec& s) -> int64_t& { return s.train.phantom_steps; }),
      number_option("phantom-damping", "phantom: the damping d of x <- d f(x) + (1 - d) x",
                    [](RunSpec& s) -> double& { return s.train.phantom_damping; }),
      number_option("tolerance", "phantom and implicit: the relative step at which the forward (and adjoint) solve stops",
                    [](RunSpec& s) -> double& { return s.train.tolerance; }),
      number_option("jacobian-weight",
                    "G of the Jacobian penalty G ||df/dx||_F^2 / (L d), one random projection per example (0: off)",
                    [](RunSpec& s) -> double& { return s.train.jacobian_weight; }),
      number_option("ema", "decay of an exponential moving average of the weights, which val, model and best then use (0: off)",
                    [](RunSpec& s) -> double& { return s.train.ema; }),
      int_option("width", "model width", [](RunSpec& s) -> int64_t& { return s.model.width; }),
      flag_option("halt-head",
                  "add a halting head, trained to predict whether the current answer is exactly right (eval --halt learned)",
                  [](RunSpec& s) -> bool& { return s.model.halt_head; }),
      number_option("halt-weight", "the halting head's binary cross-entropy weight in the loss",
                    [](RunSpec& s) -> double& { return s.train.halt_weight; }),
      int_option("heads", "attention heads", [](RunSpec& s) -> int64_t& { return s.model.heads; }),
      int_option("train-count", "training examples", [](RunSpec& s) -> int64_t& { return s.data.train_count; }),
      int_option("val-count", "val examples", [](RunSpec& s) -> int64_t& { return s.data.val_count; }),
      int_option("hard-count", "hard examples", [](RunSpec& s) -> int64_t& { return s.data.hard_count; }),
      int_option("train-bits", "1-D tasks: train and val length", [](RunSpec& s) -> int64_t& { return s.data.train_bits; }),
      int_option("hard-bits", "1-D tasks: hard length", [](RunSpec& s) -> int64_t& { return s.data.hard_bits; }),
      unsigned_option("data-seed", "seed of the generated data", [](RunSpec& s) -> uint64_t& { return s.data.seed; }),
      text_option("train-file", "CSV of training examples (replaces generated ones)",
                  [](RunSpec& s) -> std::string& { return s.data.train_file; }),
      text_option("val-file", "CSV of val examples", [](RunSpec& s) -> std::string& { return s.data.val_file; }),
      text_option("hard-file", "CSV of hard examples", [](RunSpec& s) -> std::string& { return s.data.hard_file; }),
      text_option("data-file",
                  "one file of rated examples to split by rating into easy (train, val) and hard (see the task's docs; "
                  "a task that needs one and has none makes a pool from --data-seed)",
                  [](RunSpec& s) -> std::string& { return s.data.data_file; }),
      flag_option("skip-bad", "count and skip bad rows of the data files",
                  [](RunSpec& s) -> bool& { return s.data.skip_bad; }),
      flag_option("recompute", "recompute each gradient iteration in the backward pass (flat memory in k)",
                  [](RunSpec& s) -> bool& { return s.train.recompute; }),
  };
  return options;
}

const RunOption* find_run_option(const std::string& name) {
  for (const RunOption& o : run_options())
    if (o.name == name || (!o.old_name.empty() && o.old_name == name)) return &o;
  return nullptr;
}

std::string to_text(const OptionValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  return shortest_text(std::get<double>(v));
}

}  // namespace looplab
