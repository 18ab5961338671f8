// looplab info: a model's architecture and its exact parameter count.
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "looplab/cli/commands.h"
#include "looplab/model/engine/engine.h"
#include "looplab/model/looped_transformer.h"
#include "looplab/runtime.h"

namespace looplab::cli {

namespace {

std::string with_commas(int64_t n) {
  std::string s = std::to_string(n), out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i > 0 && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  return out;
}

int64_t count(const torch::nn::Module& m) {
  int64_t n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

}  // namespace

Command add_info(CLI::App& parent) {
  auto* app = parent.add_subcommand("info", "Show a model's architecture and exact parameter count");
  auto opts = std::make_shared<ModelOptions>();
  auto json_out = std::make_shared<bool>(false), system = std::make_shared<bool>(false);
  add_model_options(app, *opts);
  app->add_flag("--json", *json_out, "print JSON");
  app->add_flag("--system", *system, "this machine instead: LibTorch, BLAS and its kernel, CPU features, product rates");
  return {app, [opts, json_out, system] {
            if (*system) {
              const nlohmann::json j = system_info();
              std::cout << (*json_out ? j.dump(2) + "\n" : system_text(j));
              return;
            }
            const ModelConfig c = model_config(*opts);
            LoopedTransformer model(c);  // counted from the real modules, not the formula
            const int64_t total = count(*model);
            nlohmann::json breakdown = {{"projection", count(*model->projection)},
                                        {"recur_blocks", count(*model->recur_blocks)},
                                        {"head", count(*model->head)}};
            // The engine of its blocks on this machine's CPU in float32 (model/engine/engine.h).
            const std::string engine = engine_for(c).describe();
            if (*json_out) {
              nlohmann::json j = {{"config", to_json(c)}, {"parameters", total}, {"breakdown", breakdown},
                                  {"engine", engine}};
              std::cout << j.dump(2) << "\n";
              return;
            }
            std::cout << describe(c)
                      << "parameters  " << with_commas(total) << "\n";
            for (const auto& [name, n] : breakdown.items())
              std::cout << "  " << std::left << std::setw(14) << name << std::right << std::setw(12)
                        << with_commas(n.get<int64_t>()) << "\n";
            std::cout << "runtime     LibTorch " << TORCH_VERSION << ", " << torch::get_num_threads() << " thread(s), CUDA "
                      << (torch::cuda::is_available() ? "available" : "not available") << "\n";
            std::cout << "engine      " << engine << " on the CPU in float32; "
                      << engine_for(c, "cpu", "float32", "bf16-mixed").describe() << " under bf16-mixed\n";
          }};
}

}  // namespace looplab::cli
