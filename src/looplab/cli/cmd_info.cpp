// looplab info: a model's architecture and its exact parameter count.
#include <iostream>

#include "looplab/cli/commands.h"
#include "looplab/model/engine/engine.h"
#include "looplab/model/summary.h"
#include "looplab/platform/runtime.h"

namespace looplab::cli {

Command add_info(CLI::App& parent) {
  auto* app = parent.add_subcommand("info", "Show a model's architecture and exact parameter count");
  auto opts = std::make_shared<ModelShape>();
  auto json_out = std::make_shared<bool>(false), system = std::make_shared<bool>(false);
  add_model_options(app, *opts);
  app->add_flag("--json", *json_out, "print JSON");
  app->add_flag("--system", *system, "this machine instead: LibTorch, BLAS and its kernel, CPU features, product rates");
  return {app, [opts, json_out, system] {
            if (*system) {
              nlohmann::json j = system_info();
              j["bf16_mixed"] = bf16_mixed_on_this_cpu();
              std::cout << (*json_out ? j.dump(2) + "\n" : system_text(j));
              return;
            }
            const ModelConfig c = model_config(*opts);
            std::cout << (*json_out ? model_summary(c).dump(2) + "\n" : model_summary_text(c));
          }};
}

}  // namespace looplab::cli
