// Run settings: config.json (the model), training.json (training and data options) and sweep
// files. The first byte picks which; any bytes are settings or a looplab::Error.
#include <nlohmann/json.hpp>

#include "fuzz_common.h"
#include "looplab/model/config.h"
#include "looplab/run/run_spec.h"
#include "looplab/sweep/sweep_file.h"
#include "looplab/tasks/task.h"
#include "looplab/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    switch (data[0] % 3) {
      case 0: {
        const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
        if (j.is_discarded()) return 0;
        looplab::validate(looplab::config_from_json(j, "config.json"));
        break;
      }
      case 1: {
        const auto j = nlohmann::json::parse(text, nullptr, false);
        if (j.is_discarded()) return 0;
        (void)looplab::train_options_from_json(j, "training.json");
        (void)looplab::data_options_from_json(j, "training.json");
        break;
      }
      default:
        (void)looplab::sweep::load_sweep(looplab::fuzz::write_input(data + 1, size - 1, ".toml"));
    }
  } catch (const looplab::Error&) {
  }
  return 0;
}
