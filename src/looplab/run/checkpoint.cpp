#include "looplab/run/checkpoint.h"

#include <nlohmann/json.hpp>

#include "looplab/io/tensor_io.h"
#include "looplab/util/error.h"

namespace looplab {

void write_checkpoint(const RunFolder& run, const Checkpoint& c) {
  std::map<std::string, torch::Tensor> tensors;
  for (const auto& [group, named] : c.groups)
    for (const auto& [name, t] : named) tensors[group + "." + name] = t;
  write_tensors(run.file(RunFolder::kCheckpoint), tensors,
                {{"epochs_done", std::to_string(c.epochs_done)},
                 {"rng", c.rng_state},
                 {"best_val", nlohmann::json(c.best_val).dump()},
                 {"best_val_position", nlohmann::json(c.best_val_position).dump()},
                 {"best_epoch", std::to_string(c.best_epoch)}});
}

Checkpoint read_checkpoint(const RunFolder& run) {
  const std::string path = run.file(RunFolder::kCheckpoint);
  std::map<std::string, std::string> meta;
  const TensorMap records = read_safetensors(path, &meta);
  Checkpoint c;
  for (const auto& [name, r] : records) {
    const size_t dot = name.find('.');
    if (dot == std::string::npos) throw Error(path + ": tensor '" + name + "' belongs to no group (GROUP.NAME)");
    c.groups[name.substr(0, dot)][name.substr(dot + 1)] = tensor_from_record(r);
  }
  try {
    c.epochs_done = std::stoll(meta.at("epochs_done"));
    c.rng_state = meta.at("rng");
    c.best_val = nlohmann::json::parse(meta.at("best_val")).get<double>();
    // Absent in checkpoints written before ties were broken by it.
    if (meta.count("best_val_position"))
      c.best_val_position = nlohmann::json::parse(meta.at("best_val_position")).get<double>();
    c.best_epoch = std::stoll(meta.at("best_epoch"));
  } catch (const std::exception&) {
    throw Error(path + ": checkpoint metadata is missing or corrupt");
  }
  return c;
}

}  // namespace looplab
