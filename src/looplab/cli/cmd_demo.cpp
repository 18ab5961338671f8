// looplab demo: the paper's contrast on the shipped models, then a short live training run
// (stages/demo.h).
#include "looplab/cli/commands.h"
#include "looplab/stages/demo.h"

namespace looplab::cli {

Command add_demo(CLI::App& parent) {
  auto* app = parent.add_subcommand("demo", "The paper's contrast: recall against autonomous, trained short, tested long");
  auto o = std::make_shared<DemoOptions>();
  app->add_option("--models", o->models, "directory holding the shipped model folders")->capture_default_str();
  app->add_option("--val-count", o->val_count, "val examples")->capture_default_str();
  app->add_option("--hard-count", o->hard_count, "hard examples")->capture_default_str();
  app->add_option("--iters", o->iters, "most test iterations")->capture_default_str();
  app->add_option("--paper-val-count", o->paper_val_count,
                  "val examples per seed of the paper's configuration (0: do not show them; default: the task's demo's)");
  app->add_option("--paper-hard-count", o->paper_hard_count,
                  "hard examples per seed of the paper's configuration (default: the task's demo's)");
  app->add_option("--live-epochs", o->live_epochs, "epochs of the short live training run (0: skip; default: the task's demo's)");
  app->add_option("--live-dir", o->live_dir, "run folder of the live training run (replaced)")->capture_default_str();
  app->add_option("--precision", o->precision,
                  "precision of the live run: float32 or bf16-mixed (bfloat16 products over float32 weights)")
      ->capture_default_str();
  return {app, [o] { run_demo(*o); }};
}

}  // namespace looplab::cli
