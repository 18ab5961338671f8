// The training loop of the paper (SPEC section 2): AdamW, per-epoch warm-up and cool-down,
// gradient clipping, the progressive loss with its n/k draws, a run directory that can be
// resumed after a stop or a kill.
//
// A run directory holds:
//   config.json             the model's hyper-parameters (so the run is a model directory)
//   training.json           {"train": TrainOptions, "data": DataSettings}
//   model.safetensors       the latest weights
//   best.safetensors        the weights with the best val accuracy so far
//   checkpoint.safetensors  weights, AdamW state, epochs done, random state (one atomic file)
//   metrics.jsonl           one JSON object per epoch
#pragma once

#include <torch/torch.h>

#include <string>

#include "looplab/data/splits.h"
#include "looplab/model/config.h"

namespace looplab {

inline constexpr const char* kBestWeightsFile = "best.safetensors";

// The weights file a user means by `which`: "latest" (model.safetensors) or "best"
// (best.safetensors, or the latest weights in a directory that has no best, e.g. a bare model
// directory). Throws looplab::Error for any other name.
std::string weights_file(const std::string& dir, const std::string& which);

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
  DataSettings data;
  TrainOptions train;
};

// The paper's sizes ("paper") or the 2-core preset ("cpu") for a task and variant.
RunSpec preset_spec(const std::string& preset, const std::string& task, Recall recall, Norm norm);

// Starts a new run in `dir`; refuses a directory that already holds a checkpoint.
void train(const std::string& dir, const RunSpec& spec, torch::Device device);
// Continues the run in `dir` from its last completed epoch; `epochs` > 0 changes the total.
void resume(const std::string& dir, int64_t epochs, torch::Device device);

RunSpec read_run_spec(const std::string& dir);

// The data a directory's model is evaluated on: a run directory's recorded settings, or the
// task's defaults (SPEC section 3) for a bare model directory.
DataSettings evaluation_data(const std::string& dir, const std::string& task);

}  // namespace looplab
