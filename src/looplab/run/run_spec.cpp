#include "looplab/run/run_spec.h"

#include <nlohmann/json.hpp>

#include "looplab/io/json_reader.h"
#include "looplab/io/option_json.h"
#include "looplab/tasks/registry.h"
#include "looplab/util/error.h"

namespace looplab {

using json = nlohmann::json;

RunSpec preset_spec(const std::string& preset, const std::string& task_name, Recall recall, Norm norm) {
  const Task& t = task(task_name);
  const Preset p = t.preset(preset);
  RunSpec s;
  s.data = t.default_data();
  // A count of 0: the task's default_data() count.
  if (p.train_count > 0) s.data.train_count = p.train_count;
  if (p.val_count > 0) s.data.val_count = p.val_count;
  if (p.hard_count > 0) s.data.hard_count = p.hard_count;
  s.model = default_config(t.name(), recall, norm, p.width);
  s.model.heads = p.heads;
  s.train.preset = preset;
  s.train.epochs = p.epochs;
  s.train.cooldown_epoch = p.cooldown_epoch;
  s.train.lr = p.lr;
  s.train.batch = p.batch;
  // The paper trained "with BF16 casting" (B.1.3).
  if (preset == "paper") s.train.precision = "bf16-mixed";
  return s;
}

namespace {
const std::vector<std::string>& gradient_names() {
  static const std::vector<std::string> names = {"bptt", "one-step", "phantom", "implicit"};
  return names;
}
}  // namespace

GradientMethod parse_gradient_method(const std::string& name) {
  static const GradientMethod methods[] = {GradientMethod::kBptt, GradientMethod::kOneStep, GradientMethod::kPhantom,
                                           GradientMethod::kImplicit};
  for (size_t i = 0; i < gradient_names().size(); ++i)
    if (name == gradient_names()[i]) return methods[i];
  throw OptionError("gradient", one_of(gradient_names())(name));
}

const OptionTable<TrainOptions>& train_option_table() {
  using T = TrainOptions;
  // docs/presets.md lists the presets' values; docs/training-methods.md the gradients.
  static const OptionTable<T> table = {
      option("preset", &T::preset, "the preset the run started from (chosen by --preset)").file_only(),
      option("lr", &T::lr, "peak learning rate", positive()),
      option("epochs", &T::epochs, "epochs (with --resume: the new total)", at_least<int64_t>(1)),
      option("cooldown-epoch", &T::cooldown_epoch, "first epoch of the 10x cool-down (paper: 60)"),
      option("batch", &T::batch, "batch size", at_least<int64_t>(1)),
      option("seed", &T::seed, "seed of initialization, shuffling and n/k draws"),
      option("training-iters", &T::training_iters, "T, the training iterations: the most the progressive loss runs",
             at_least<int64_t>(1)).was("max-iters"),
      option("alpha", &T::alpha, "progressive-loss weight (1: progressive loss only)", within(0, 1)),
      option("weight-decay", &T::weight_decay, "AdamW's decoupled weight decay (the weight matrices' group)",
             at_least(0.0)),
      option("clip", &T::clip, "the gradient's largest global norm", positive()),
      option("eval-batch", &T::eval_batch, "examples per batch of the val accuracy after each epoch",
             at_least<int64_t>(1)),
      option("recompute", &T::recompute, "recompute each gradient iteration in the backward pass (flat memory in k)"),
      option("dtype", &T::dtype, "float32, float64 or bfloat16 (bfloat16 weights and AdamW: docs/performance.md)",
             one_of({"float32", "float64", "bfloat16", "float16"})),
      option("precision", &T::precision,
             "float32, or bf16-mixed: bfloat16 products over float32 weights (paper preset: bf16-mixed on a CPU "
             "with AVX512-BF16 or on CUDA)",
             one_of({"float32", "bf16-mixed"})).added_later(),  // absent from schema 1: float32
      option("gradient", &T::gradient,
             "how the gradient is taken: bptt (the progressive loss), one-step, phantom or implicit "
             "(docs/training-methods.md)",
             one_of(gradient_names())).added_later(),
      option("phantom-steps", &T::phantom_steps, "phantom: damped steps with gradient from the fixed point",
             at_least<int64_t>(1)).added_later(),
      option("phantom-damping", &T::phantom_damping, "phantom: the damping d of x <- d f(x) + (1 - d) x",
             within(0, 1, true)).added_later(),
      option("batch-tolerance", &T::batch_tolerance,
             "phantom and implicit: the batch's relative step ||X_{t+1} - X_t|| / ||X_t|| at which the forward "
             "(and adjoint) solve stops",
             positive()).was("tolerance").added_later(),
      option("jacobian-weight", &T::jacobian_weight,
             "G of the Jacobian penalty G ||df/dx||_F^2 / (L d), one random projection per example (0: off)",
             at_least(0.0)).added_later(),
      option("ema", &T::ema,
             "decay of an exponential moving average of the weights, which val, model and best then use (0: off)",
             within(0, 1, false, true)).added_later(),
      option("halt-weight", &T::halt_weight, "the halting head's binary cross-entropy weight in the loss",
             at_least(0.0)).added_later(),
  };
  return table;
}

void check(const RunSpec& s) {
  const TrainOptions& o = s.train;
  check_options(train_option_table(), o);
  check_options(data_option_table(), s.data);
  // The checks that join two options.
  if (o.gradient != "bptt" && o.alpha != 1) throw OptionError("alpha", " must be 1 with --gradient " + o.gradient);
  if (o.precision != "float32" && o.dtype != "float32")
    throw OptionError("precision", " bf16-mixed keeps float32 weights: it needs --dtype float32, not " + o.dtype);
  validate(s.model);
}

std::vector<std::string> differences(const RunSpec& here, const RunSpec& there) {
  std::vector<std::string> out;
  auto compare = [&out](const char* part, const json& a, const json& b) {
    for (const auto& [key, value] : a.items()) {
      const auto it = b.find(key);
      const std::string theirs = it == b.end() ? "(absent)" : it->dump();
      if (it == b.end() || *it != value) out.push_back(std::string(part) + "." + key + ": " + value.dump() + " here, " + theirs + " there");
    }
    for (const auto& [key, value] : b.items())
      if (!a.contains(key)) out.push_back(std::string(part) + "." + key + ": (absent) here, " + value.dump() + " there");
  };
  compare("model", to_json(here.model), to_json(there.model));
  compare("train", to_json(here.train), to_json(there.train));
  compare("data", to_json(here.data), to_json(there.data));
  return out;
}

json to_json(const TrainOptions& o) { return options_to_json(train_option_table(), o); }

TrainOptions train_options_from_json(const json& j, const std::string& source) {
  using namespace json_reader;
  return read_typed<TrainOptions>(j, source, [](const json& j) {
    TrainOptions o;
    nested("train", [&] { options_from_json(train_option_table(), j, o); });
    return o;
  });
}

}  // namespace looplab
