// looplab init: a freshly initialized model directory, reproducible by seed.
#include <filesystem>
#include <iostream>

#include "looplab/cli/commands.h"
#include "looplab/run/model_dir.h"
#include "looplab/util/error.h"

namespace looplab::cli {

Command add_init(CLI::App& parent) {
  auto* app = parent.add_subcommand("init", "Write a freshly initialized model directory");
  struct Options {
    ModelOptions model;
    uint64_t seed = 0;
    std::string out;
    bool force = false;
  };
  auto o = std::make_shared<Options>();
  add_model_options(app, o->model);
  app->add_option("--seed", o->seed, "random seed for the initialization")->required();
  app->add_option("--out", o->out, "model directory to write")->required();
  app->add_flag("--force", o->force, "overwrite a model already in --out");
  return {app, [o] {
            const ModelConfig c = model_config(o->model);
            if (!o->force && std::filesystem::exists(o->out + "/" + RunDir::kWeights))
              throw Error(o->out + ": already holds a model (use --force to overwrite)");
            torch::manual_seed(o->seed);
            LoopedTransformer model(c);  // PyTorch's default initialization, as the paper's code
            save_model(o->out, *model);
            std::cout << "wrote " << o->out << "/" << RunDir::kConfig << " and " << o->out << "/" << RunDir::kWeights << "\n";
          }};
}

}  // namespace looplab::cli
