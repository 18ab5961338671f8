#include "looplab/run/run_spec.h"

#include <nlohmann/json.hpp>

#include "looplab/io/json_reader.h"
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

GradientMethod parse_gradient_method(const std::string& name) {
  static const std::pair<const char*, GradientMethod> names[] = {{"bptt", GradientMethod::kBptt},
                                                                 {"one-step", GradientMethod::kOneStep},
                                                                 {"phantom", GradientMethod::kPhantom},
                                                                 {"implicit", GradientMethod::kImplicit}};
  for (const auto& [n, m] : names)
    if (name == n) return m;
  throw OptionError("gradient", " '" + name + "': expected bptt, one-step, phantom or implicit");
}

void check(const RunSpec& s) {
  const TrainOptions& o = s.train;
  auto need = [](bool ok, const char* option, const std::string& rest) {
    if (!ok) throw OptionError(option, rest);
  };
  need(o.lr > 0, "lr", " must be positive");
  need(o.epochs >= 1, "epochs", " must be >= 1");
  need(o.batch >= 1, "batch", " must be >= 1");
  need(o.eval_batch >= 1, "eval_batch", " must be >= 1");
  need(o.training_iters >= 1, "training_iters", " must be >= 1");
  need(o.alpha >= 0 && o.alpha <= 1, "alpha", " must lie in [0, 1]");
  need(o.clip > 0, "clip", " must be positive");
  // The names parse_dtype (runtime.h) accepts; checked here without LibTorch.
  need(o.dtype == "float32" || o.dtype == "float64" || o.dtype == "bfloat16" || o.dtype == "float16", "dtype",
       " '" + o.dtype + "': unknown dtype (expected float32, float64, bfloat16 or float16)");
  need(o.precision == "float32" || o.precision == "bf16-mixed", "precision",
       " '" + o.precision + "': expected float32 or bf16-mixed");
  parse_gradient_method(o.gradient);
  need(o.gradient == "bptt" || o.alpha == 1, "alpha", " must be 1 with --gradient " + o.gradient);
  need(o.phantom_steps >= 1, "phantom_steps", " must be >= 1");
  need(o.phantom_damping > 0 && o.phantom_damping <= 1, "phantom_damping", " must lie in (0, 1]");
  need(o.tolerance > 0, "tolerance", " must be positive");
  need(o.jacobian_weight >= 0, "jacobian_weight", " must be >= 0");
  need(o.ema >= 0 && o.ema < 1, "ema", " must lie in [0, 1)");
  need(o.halt_weight >= 0, "halt_weight", " must be >= 0");
  need(o.precision == "float32" || o.dtype == "float32", "precision",
       " bf16-mixed keeps float32 weights: it needs --dtype float32, not " + o.dtype);
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

json to_json(const TrainOptions& o) {
  return {{"preset", o.preset},       {"lr", o.lr},
          {"epochs", o.epochs},       {"batch", o.batch},
          {"seed", o.seed},           {"training_iters", o.training_iters},
          {"alpha", o.alpha},         {"weight_decay", o.weight_decay},
          {"clip", o.clip},           {"cooldown_epoch", o.cooldown_epoch},
          {"eval_batch", o.eval_batch}, {"recompute", o.recompute},
          {"dtype", o.dtype},         {"precision", o.precision},
          {"gradient", o.gradient},   {"phantom_steps", o.phantom_steps},
          {"phantom_damping", o.phantom_damping}, {"tolerance", o.tolerance},
          {"jacobian_weight", o.jacobian_weight}, {"ema", o.ema}, {"halt_weight", o.halt_weight}};
}

TrainOptions train_options_from_json(const json& j, const std::string& source) {
  using namespace json_reader;
  return read_typed<TrainOptions>(j, source, [](const json& j) {
    TrainOptions o;
    nested("train", [&] {
      need_object(j);
      get(j, "preset", o.preset);
      get(j, "lr", o.lr);
      get(j, "epochs", o.epochs);
      get(j, "batch", o.batch);
      get(j, "seed", o.seed);
      get(j, j.contains("training_iters") ? "training_iters" : "max_iters", o.training_iters);  // max_iters: version <= 2
      get(j, "alpha", o.alpha);
      get(j, "weight_decay", o.weight_decay);
      get(j, "clip", o.clip);
      get(j, "cooldown_epoch", o.cooldown_epoch);
      get(j, "eval_batch", o.eval_batch);
      get(j, "recompute", o.recompute);
      get(j, "dtype", o.dtype);
      get_optional(j, "precision", o.precision);  // absent from schema-1 files, which trained in float32 (or --dtype)
      // Absent from files before --gradient (2026-12-03): bptt.
      get_optional(j, "gradient", o.gradient);
      get_optional(j, "phantom_steps", o.phantom_steps);
      get_optional(j, "phantom_damping", o.phantom_damping);
      get_optional(j, "tolerance", o.tolerance);
      get_optional(j, "jacobian_weight", o.jacobian_weight);  // absent before 2026-12-04: off
      get_optional(j, "ema", o.ema);
      get_optional(j, "halt_weight", o.halt_weight);
    });
    return o;
  });
}

}  // namespace looplab
