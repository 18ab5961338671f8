#include "looplab/model/model_dir.h"

#include <nlohmann/json.hpp>

#include "looplab/io/atomic_file.h"
#include "looplab/io/tensor_io.h"
#include "looplab/util/error.h"

namespace looplab {

namespace {

std::string join(const std::string& dir, const std::string& file) { return dir + "/" + file; }

}  // namespace

void save_model(const std::string& dir, LoopedTransformerImpl& model, const std::string& weights_file) {
  make_directories(dir);
  write_file_atomic(join(dir, kConfigFile), to_json(model.config()).dump(2) + "\n");
  std::map<std::string, torch::Tensor> tensors;
  for (const auto& item : model.named_parameters()) tensors.emplace(item.key(), item.value());
  // "format: pt" is what PyTorch's safetensors writer records.
  write_tensors(join(dir, weights_file), tensors, {{"format", "pt"}, {"writer", "looplab"}});
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
  LoopedTransformer model(read_model_config(dir));
  load_weights(*model, join(dir, weights_file));
  model->to(device, dtype.value_or(torch::kFloat32));
  return model;
}

}  // namespace looplab
