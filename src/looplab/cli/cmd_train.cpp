// looplab train: train a looped model with the progressive loss, or resume a run.
#include <iostream>

#include "looplab/cli/commands.h"
#include "looplab/distributed/ranks.h"
#include "looplab/run/run_folder.h"
#include "looplab/run/run_options.h"
#include "looplab/platform/runtime.h"
#include "looplab/tasks/registry.h"
#include "looplab/train/trainer.h"
#include "looplab/util/error.h"

namespace looplab::cli {

namespace {

struct Options {
  std::string task = default_task(), recall = "external", norm = "post", preset = "cpu", out, resume;
  std::string device = "cpu";
  double dist_timeout = 60;
  // Flags given on the command line, applied over the preset in order.
  std::vector<std::pair<std::string, std::function<void(RunSpec&)>>> overrides;
};

}  // namespace

Command add_train(CLI::App& parent) {
  auto* app = parent.add_subcommand("train", "Train with the progressive loss (SPEC section 2), or --resume a run");
  auto o = std::make_shared<Options>();
  add_architecture_options(app, o->task, o->recall, o->norm);
  app->add_option("--preset", o->preset, "paper (the paper's sizes) or cpu (for 2 cores)")
      ->capture_default_str()
      ->check(checked("PRESET", [](const std::string& v) { all_tasks().front()->preset(v); }, {"paper", "cpu"}));
  app->add_option("--out", o->out, "run folder to create");
  app->add_option("--resume", o->resume, "run folder to continue");
  app->add_option("--device", o->device, "cpu, cuda or cuda:N")->capture_default_str();
  app->add_option("--dist-timeout", o->dist_timeout,
                  "data-parallel runs (docs/distributed.md): seconds to wait for the other ranks at the start and in "
                  "each collective before naming the lost one")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  // One flag per option of the run table (run/run_options.h), recorded in the order given.
  add_option_flags<RunSpec>(app, run_options(), [o](const RunOption& option, const OptionValue& v) {
    o->overrides.emplace_back("--" + option.key, [option, v](RunSpec& s) { option.set(s, v); });
  });
  return {app, [o] {
            const torch::Device device = parse_device(o->device);
            // Several ranks when the launcher's environment says so (torchrun's or srun's).
            const auto ranks = Ranks::join_launched(device, o->dist_timeout);
            if (!o->resume.empty()) {
              if (!o->out.empty()) throw Error("give either --out (a new run) or --resume (an existing one), not both");
              RunSpec changed;
              changed.train.epochs = 0;
              for (const auto& [name, apply] : o->overrides) {
                if (name != "--epochs") throw Error(name + " cannot change a run being resumed (only --epochs can)");
                apply(changed);
              }
              resume(o->resume, changed.train.epochs, device, *ranks);
              return;
            }
            if (o->out.empty()) throw Error("--out DIR is required (or --resume DIR)");
            if (RunFolder(o->out).has(RunFolder::kCheckpoint))
              throw Error(o->out + ": already holds a run (use --resume " + o->out + " to continue it)");
            RunSpec spec = preset_spec(o->preset, o->task, parse_recall(o->recall), parse_norm(o->norm));
            for (const auto& [name, apply] : o->overrides) apply(spec);
            train(o->out, spec, device, *ranks);
          }};
}

}  // namespace looplab::cli
