// looplab forward: run a model directory on a tensor file. The interoperability and
// debugging path: inputs and outputs are safetensors that PyTorch code reads directly.
#include <iostream>

#include "looplab/cli/commands.h"
#include "looplab/io/tensor_io.h"
#include "looplab/run/model_dir.h"
#include "looplab/runtime.h"
#include "looplab/util/error.h"

namespace looplab::cli {

Command add_forward(CLI::App& parent) {
  auto* app = parent.add_subcommand(
      "forward", "Run a model on the tensor 'input' [batch, positions, C_in] of a safetensors file");
  struct Options {
    std::string dir, input, output, device = "cpu", dtype = "float32";
    int64_t iters = 30;
  };
  auto o = std::make_shared<Options>();
  app->add_option("dir", o->dir, "model directory")->required();
  app->add_option("--input", o->input, "safetensors file holding 'input'")->required();
  app->add_option("--iters", o->iters, "iterations to run")->capture_default_str();
  app->add_option("--output", o->output, "safetensors file to write 'logits' and 'state' to")->required();
  app->add_option("--device", o->device, "cpu, cuda or cuda:N")->capture_default_str();
  app->add_option("--dtype", o->dtype, "float32, float64, bfloat16 or float16")->capture_default_str();
  return {app, [o] {
            if (o->iters < 0) throw Error("--iters must be >= 0");
            const torch::Device device = parse_device(o->device);
            const torch::Dtype dtype = parse_dtype(o->dtype);
            LoopedTransformer model = load_model(o->dir, device, dtype);
            const auto tensors = read_tensors(o->input);
            auto it = tensors.find("input");
            if (it == tensors.end()) {
              std::string names;
              for (const auto& [n, t] : tensors) names += (names.empty() ? "" : ", ") + n;
              throw Error(o->input + ": no tensor named 'input' (found: " + (names.empty() ? "none" : names) + ")");
            }
            if (!it->second.is_floating_point()) throw Error(o->input + ": tensor 'input' is not floating point");
            model->eval();
            torch::InferenceMode inference;
            auto out = model->forward(it->second, o->iters);
            write_tensors(o->output, {{"logits", out.logits}, {"state", out.state}});
            std::cout << "wrote " << o->output << ": logits " << out.logits.sizes() << ", state " << out.state.sizes()
                      << " after " << o->iters << " iteration(s) on " << device << " in " << dtype_name(dtype) << "\n";
          }};
}

}  // namespace looplab::cli
