#include "looplab/run/model_folder.h"

#include "looplab/tasks/registry.h"

#include <nlohmann/json.hpp>

#include "looplab/io/atomic_file.h"
#include "looplab/io/json_file.h"
#include "looplab/io/tensor_io.h"
#include "looplab/util/error.h"

namespace looplab {

namespace {

std::string join(const std::string& dir, const std::string& file) { return dir + "/" + file; }

}  // namespace

void save_model(const std::string& dir, LoopedTransformerImpl& model, const std::string& weights_file) {
  make_directories(dir);
  write_file_atomic(join(dir, RunFolder::kConfig), to_json(model.config()).dump(2) + "\n");
  std::map<std::string, torch::Tensor> tensors;
  for (const auto& item : model.named_parameters()) tensors.emplace(item.key(), item.value());
  // "format: pt" is what PyTorch's safetensors writer records.
  write_tensors(join(dir, weights_file), tensors, {{"format", "pt"}, {"writer", "looplab"}});
}

void init_model(const std::string& dir, const ModelConfig& c, uint64_t seed, bool overwrite) {
  if (!overwrite && RunFolder(dir).has(RunFolder::kWeights))
    throw Error(dir + ": already holds a model (use --force to overwrite)");
  torch::manual_seed(seed);
  LoopedTransformer model(c);
  save_model(dir, *model);
}

void load_weights(LoopedTransformerImpl& model, const std::string& path) {
  const auto tensors = read_tensors(path);
  const std::string variant = "a " + to_string(model.config().recall) + "-recall " + to_string(model.config().norm) +
                              "-norm model of " + std::to_string(model.config().blocks) + " block(s)";
  auto params = model.named_parameters();
  for (const auto& [name, t] : tensors)
    if (!params.contains(name)) throw Error(path + ": unexpected tensor '" + name + "' (not part of " + variant + ")");
  torch::NoGradGuard no_grad;
  for (auto& item : params) {
    auto it = tensors.find(item.key());
    if (it == tensors.end()) throw Error(path + ": tensor '" + item.key() + "' is missing (" + variant + ")");
    const torch::Tensor& t = it->second;
    if (t.sizes() != item.value().sizes())
      throw Error(path + ": tensor '" + item.key() + "' has shape " + c10::str(t.sizes()) + ", the config needs " +
                  c10::str(item.value().sizes()));
    if (!t.is_floating_point()) throw Error(path + ": tensor '" + item.key() + "' is not floating point");
    item.value().copy_(t);
  }
}

LoopedTransformer load_model(const std::string& dir, torch::Device device, std::optional<torch::Dtype> dtype,
                             const std::string& weights_file) {
  const std::string config_path = join(dir, RunFolder::kConfig);
  const nlohmann::json j = read_json_file(config_path);
  LoopedTransformer model(config_from_json(j, config_path));
  const int64_t version = model_version(j, config_path);
  using Inputs = TaskSpec::Version1Inputs;
  const Inputs inputs = version == 1 ? looplab::task(model->config().task).spec().version1_inputs : Inputs::kSame;
  if (inputs == Inputs::kMoved)  // chess: rank 1 was in grid row 0
    throw Error(config_path + ": key 'version': 1: a " + model->config().task + " model from looplab before "
                "2026-12-03, whose grid layout differs from the paper's released code's (rank 8 in row 0); the "
                "weights cannot be carried over (their RoPE positions differ): train it again");
  load_weights(*model, join(dir, weights_file));
  if (inputs == Inputs::kShiftedByHalf) {
    // W bit + b = W (bit - 0.5) + (b + 0.5 W): the same outputs on the new encoding.
    torch::NoGradGuard no_grad;
    model->projection->bias.add_(model->projection->weight.sum(1), 0.5);
  }
  model->to(device, dtype.value_or(torch::kFloat32));
  return model;
}

}  // namespace looplab
