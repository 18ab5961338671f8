// looplab init: a freshly initialized model folder, reproducible by seed.
#include <iostream>

#include "looplab/cli/commands.h"
#include "looplab/run/model_folder.h"

namespace looplab::cli {

Command add_init(CLI::App& parent) {
  auto* app = parent.add_subcommand("init", "Write a freshly initialized model folder");
  struct Options {
    ModelShape model;
    uint64_t seed = 0;
    std::string out;
    bool force = false;
  };
  auto o = std::make_shared<Options>();
  add_model_options(app, o->model);
  app->add_option("--seed", o->seed, "random seed for the initialization")->required();
  app->add_option("--out", o->out, "model folder to write")->required();
  app->add_flag("--force", o->force, "overwrite a model already in --out");
  return {app, [o] {
            init_model(o->out, model_config(o->model), o->seed, o->force);
            std::cout << "wrote " << o->out << "/" << RunFolder::kConfig << " and " << o->out << "/" << RunFolder::kWeights << "\n";
          }};
}

}  // namespace looplab::cli
