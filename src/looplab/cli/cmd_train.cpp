// looplab train: train a looped model with the progressive loss, or resume a run.
#include <iostream>

#include "looplab/cli/commands.h"
#include "looplab/run/run_dir.h"
#include "looplab/runtime.h"
#include "looplab/tasks/registry.h"
#include "looplab/train/trainer.h"
#include "looplab/util/error.h"

namespace looplab::cli {

namespace {

struct Options {
  std::string task = default_task(), recall = "external", norm = "post", preset = "cpu", out, resume;
  std::string device = "cpu";
  bool recompute = false;
  // Flags given on the command line, applied over the preset in order.
  std::vector<std::pair<std::string, std::function<void(RunSpec&)>>> overrides;
};

template <typename T, typename Set>
void add_override(CLI::App* app, const std::shared_ptr<Options>& o, const std::string& name, const std::string& help,
                  Set set) {
  app->add_option_function<T>(
      name, [o, name, set](const T& v) { o->overrides.emplace_back(name, [set, v](RunSpec& s) { set(s, v); }); },
      help);
}

}  // namespace

Command add_train(CLI::App& parent) {
  auto* app = parent.add_subcommand("train", "Train with the progressive loss (SPEC section 2), or --resume a run");
  auto o = std::make_shared<Options>();
  app->add_option("--task", o->task, task_names())->capture_default_str()->check(task_name());
  app->add_option("--recall", o->recall, "none, external, internal or fixed")->capture_default_str()->check(recall_name());
  app->add_option("--norm", o->norm, "pre, peri, post or gru")->capture_default_str()->check(norm_name());
  app->add_option("--preset", o->preset, "paper (the paper's sizes) or cpu (for 2 cores)")
      ->capture_default_str()
      ->check(checked("PRESET", [](const std::string& v) { all_tasks().front()->preset(v); }, {"paper", "cpu"}));
  app->add_option("--out", o->out, "run directory to create");
  app->add_option("--resume", o->resume, "run directory to continue");
  app->add_option("--device", o->device, "cpu, cuda or cuda:N")->capture_default_str();
  app->add_flag("--recompute", o->recompute, "recompute each gradient iteration in the backward pass (flat memory in k)");
  // Overrides of the preset (docs/presets.md lists the presets' values).
  add_override<double>(app, o, "--lr", "peak learning rate", [](RunSpec& s, double v) { s.train.lr = v; });
  add_override<int64_t>(app, o, "--epochs", "epochs (with --resume: the new total)",
                        [](RunSpec& s, int64_t v) { s.train.epochs = v; });
  add_override<int64_t>(app, o, "--cooldown-epoch", "first epoch of the 10x cool-down (paper: 60)",
                        [](RunSpec& s, int64_t v) { s.train.cooldown_epoch = v; });
  add_override<int64_t>(app, o, "--batch", "batch size", [](RunSpec& s, int64_t v) { s.train.batch = v; });
  add_override<uint64_t>(app, o, "--seed", "seed of initialization, shuffling and n/k draws",
                         [](RunSpec& s, uint64_t v) { s.train.seed = v; });
  add_override<int64_t>(app, o, "--max-iters", "T, the most iterations in training",
                        [](RunSpec& s, int64_t v) { s.train.max_iters = v; });
  add_override<double>(app, o, "--alpha", "progressive-loss weight (1: progressive loss only)",
                       [](RunSpec& s, double v) { s.train.alpha = v; });
  add_override<std::string>(app, o, "--dtype", "float32 or float64",
                            [](RunSpec& s, const std::string& v) { s.train.dtype = v; });
  add_override<int64_t>(app, o, "--width", "model width", [](RunSpec& s, int64_t v) { s.model.width = v; });
  add_override<int64_t>(app, o, "--heads", "attention heads", [](RunSpec& s, int64_t v) { s.model.heads = v; });
  add_override<int64_t>(app, o, "--train-count", "training examples",
                        [](RunSpec& s, int64_t v) { s.data.train_count = v; });
  add_override<int64_t>(app, o, "--val-count", "val examples", [](RunSpec& s, int64_t v) { s.data.val_count = v; });
  add_override<int64_t>(app, o, "--hard-count", "hard examples", [](RunSpec& s, int64_t v) { s.data.hard_count = v; });
  add_override<int64_t>(app, o, "--train-bits", "1-D tasks: train and val length",
                        [](RunSpec& s, int64_t v) { s.data.train_bits = v; });
  add_override<int64_t>(app, o, "--hard-bits", "1-D tasks: hard length",
                        [](RunSpec& s, int64_t v) { s.data.hard_bits = v; });
  add_override<uint64_t>(app, o, "--data-seed", "seed of the generated data",
                         [](RunSpec& s, uint64_t v) { s.data.seed = v; });
  add_override<std::string>(app, o, "--train-file", "CSV of training examples (replaces generated ones)",
                            [](RunSpec& s, const std::string& v) { s.data.train_file = v; });
  add_override<std::string>(app, o, "--val-file", "CSV of val examples",
                            [](RunSpec& s, const std::string& v) { s.data.val_file = v; });
  add_override<std::string>(app, o, "--hard-file", "CSV of hard examples",
                            [](RunSpec& s, const std::string& v) { s.data.hard_file = v; });
  add_override<std::string>(app, o, "--data-file",
                            "one file of rated examples to split by rating into easy (train, val) and hard (see the "
                            "task's docs; a task that needs one and has none makes a pool from --data-seed)",
                            [](RunSpec& s, const std::string& v) { s.data.data_file = v; });
  app->add_flag_function(
      "--skip-bad",
      [o](int64_t) { o->overrides.emplace_back("--skip-bad", [](RunSpec& s) { s.data.skip_bad = true; }); },
      "count and skip bad rows of the data files");
  return {app, [o] {
            const torch::Device device = parse_device(o->device);
            if (!o->resume.empty()) {
              if (!o->out.empty()) throw Error("give either --out (a new run) or --resume (an existing one), not both");
              RunSpec changed;
              changed.train.epochs = 0;
              for (const auto& [name, apply] : o->overrides) {
                if (name != "--epochs") throw Error(name + " cannot change a run being resumed (only --epochs can)");
                apply(changed);
              }
              resume(o->resume, changed.train.epochs, device);
              return;
            }
            if (o->out.empty()) throw Error("--out DIR is required (or --resume DIR)");
            if (RunDir(o->out).has(RunDir::kCheckpoint))
              throw Error(o->out + ": already holds a run (use --resume " + o->out + " to continue it)");
            RunSpec spec = preset_spec(o->preset, o->task, parse_recall(o->recall), parse_norm(o->norm));
            for (const auto& [name, apply] : o->overrides) apply(spec);
            spec.train.recompute = o->recompute;
            train(o->out, spec, device);
          }};
}

}  // namespace looplab::cli
