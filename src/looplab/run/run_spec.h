// The settings of a training run (config.json's model, training.json's training and data
// options), torch-free so that the command line, the server and sweeps read them alike.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "looplab/model/config.h"
#include "looplab/tasks/task.h"

namespace looplab {

struct TrainOptions {
  std::string preset = "cpu";
  double lr = 1e-3;
  int64_t epochs = 30;
  int64_t batch = 500;
  uint64_t seed = 0;
  int64_t max_iters = 30;   // T: n + k never exceed it, val accuracy is measured after it
  double alpha = 1.0;       // loss = alpha * progressive + (1 - alpha) * loss after T iterations
  double weight_decay = 0.01;
  double clip = 1.0;
  int64_t cooldown_epoch = 60;
  int64_t eval_batch = 500;
  bool recompute = false;
  std::string dtype = "float32";
};

struct RunSpec {
  ModelConfig model;
  DataOptions data;
  TrainOptions train;
};

// The named preset ("paper": the paper's sizes, "cpu": for 2 cores) of a task and variant.
RunSpec preset_spec(const std::string& preset, const std::string& task, Recall recall, Norm norm);

// Throws OptionError naming the first bad training option (or looplab::Error for the model).
void check(const RunSpec& spec);

// The settings in which two specs differ, as "train.epochs: 60 here, 24 there" (model, train
// and data keys as config.json and training.json spell them); empty when they agree.
std::vector<std::string> differences(const RunSpec& here, const RunSpec& there);

// training.json: {"schema_version", "train": TrainOptions, "data": DataOptions}.
inline constexpr int kTrainingSchemaVersion = 1;
nlohmann::json to_json(const TrainOptions& o);
TrainOptions train_options_from_json(const nlohmann::json& j, const std::string& source);

}  // namespace looplab
