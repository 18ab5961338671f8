// looplab forward: run a model folder on a tensor file. The interoperability and
// debugging path: inputs and outputs are safetensors that PyTorch code reads directly.
#include <iostream>

#include "looplab/cli/commands.h"
#include "looplab/stages/stages.h"

namespace looplab::cli {

Command add_forward(CLI::App& parent) {
  auto* app = parent.add_subcommand(
      "forward", "Run a model on the tensor 'input' [batch, positions, C_in] of a safetensors file");
  struct Options {
    std::string dir;
    ForwardOptions forward;
  };
  auto o = std::make_shared<Options>();
  ForwardOptions& f = o->forward;
  app->add_option("dir", o->dir, "model folder")->required();
  app->add_option("--input", f.input, "safetensors file holding 'input'")->required();
  app->add_option("--iters", f.iters, "iterations to run")->capture_default_str();
  app->add_option("--output", f.output, "safetensors file to write 'logits' and 'state' to")->required();
  app->add_option("--device", f.device, "cpu, cuda or cuda:N")->capture_default_str();
  app->add_option("--dtype", f.dtype, "float32, float64, bfloat16 or float16")->capture_default_str();
  return {app, [o] { std::cout << forward_file(o->dir, o->forward); }};
}

}  // namespace looplab::cli
