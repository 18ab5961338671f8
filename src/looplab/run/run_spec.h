// The settings of a training run (config.json's model, training.json's training and data
// options), torch-free so that the command line, the server and sweeps read them alike.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "looplab/model/config.h"
#include "looplab/tasks/task.h"
#include "looplab/util/options.h"

namespace looplab {

// The training options. `looplab train` and sweeps start from preset_spec (below): each field's
// effective default is its preset's (tasks/task.h's Preset; docs/presets.md lists them by task:
// e.g. 60 epochs with the cool-down at 50 in the cpu preset, the paper's batch 500 and 100
// epochs with the cool-down at 60 in the paper preset), then the flags of run/run_options.h.
// The initializers here are the struct's own, for code that builds one by hand (tests).
// How the gradient is taken (TrainOptions::gradient, by name in training.json and `--gradient`).
enum class GradientMethod { kBptt, kOneStep, kPhantom, kImplicit };
// "bptt", "one-step", "phantom", "implicit" <-> the enum; an unknown name is an
// OptionError("gradient", ...) listing the four.
GradientMethod parse_gradient_method(const std::string& name);
// phantom and implicit: the gradient at the fixed point (alpha 1, a forward solve to `tolerance`).
inline bool at_fixed_point(GradientMethod m) { return m == GradientMethod::kPhantom || m == GradientMethod::kImplicit; }

struct TrainOptions {
  std::string preset = "cpu";
  double lr = 1e-3;
  int64_t epochs = 30;
  int64_t batch = 500;
  uint64_t seed = 0;
  // T, the training iterations (--training-iters): n + k never exceed it, val accuracy is
  // measured after it. training.json's key "training_iters" (version 2 and before: "max_iters").
  int64_t training_iters = 30;
  double alpha = 1.0;       // loss = alpha * progressive + (1 - alpha) * loss after T iterations
  double weight_decay = 0.01;
  double clip = 1.0;
  int64_t cooldown_epoch = 60;
  int64_t eval_batch = 500;
  bool recompute = false;
  std::string dtype = "float32";
  // "float32", or "bf16-mixed": bfloat16 products under autocast over float32 weights, AdamW
  // state and reductions (platform/runtime.h), as the paper trained. The paper preset asks for it;
  // where bf16_mixed_supported() is false, train() takes float32 for that preset and says so.
  std::string precision = "float32";
  // How the gradient is taken (train/progressive_loss.h, `--gradient`): "bptt", the progressive
  // loss through k unrolled iterations (the paper's; with alpha); "one-step", through the last
  // of the n + k iterations only; "phantom", from the fixed point reached without gradient,
  // `phantom_steps` damped steps x <- d f(x) + (1 - d) x (d = `phantom_damping`) with gradient;
  // "implicit", at the fixed point by the implicit-function theorem (the adjoint solved by
  // fixed-point iteration). phantom and implicit iterate until the batch's relative step
  // ||X_{t+1} - X_t|| / ||X_t|| (model/relative_step.h) is below `batch_tolerance`, at most T
  // iterations, and need alpha 1. training.json's "batch_tolerance" (version 3 and before: "tolerance").
  std::string gradient = "bptt";
  int64_t phantom_steps = 5;
  double phantom_damping = 0.5;
  double batch_tolerance = 1e-4;
  // The Jacobian penalty's weight G (train/jacobian_penalty.h, `--jacobian-weight`): the loss
  // gains G ||df/dx||_F^2 / (L d), estimated with one Gaussian projection per example at the
  // state where the loss is read (bptt, one-step: x_{n+k}; phantom: after the damped steps;
  // implicit: x*). 0: off.
  double jacobian_weight = 0;
  // The decay D of an exponential moving average of the weights (`--ema`, as HRM and TRM keep
  // one): after every optimizer step ema <- D ema + (1 - D) w, starting from the initial
  // weights. When set, val accuracy, model.safetensors and best.safetensors are the EMA's, and
  // raw.safetensors keeps the trained weights. 0: off.
  double ema = 0;
  // With a halting head (ModelConfig::halt_head): the weight of its binary cross-entropy
  // against "the answer at the state the loss is read from is exactly right" (`--halt-weight`).
  // The head reads that state detached: it learns to judge the model's states without changing
  // them (HRM's and TRM's Q-heads train the model too).
  double halt_weight = 1;
};

// training.json's schema. 6: "border" in "data" (the mazes' rings of blocked cells). 5: "train_size" and "hard_size" in "data" (the mazes' sizes). 4: "batch_tolerance" for version 3's "tolerance" (the fixed-point
// gradients' stop, a relative step over the whole batch, while an example's tolerance is
// evaluation's and the analysis's). 3: "training_iters" (T) for version 2's "max_iters", which meant
// the most iterations per example elsewhere. 2: the paper's released recipe (train/schedule.h's warm-up ending
// at epoch 9, train/adamw.h's weight-decay groups, the inputs of config.json version 2) and
// "precision". 1: looplab before 2026-12-03, whose runs can be read and evaluated but not
// resumed.
inline constexpr int kTrainingSchemaVersion = 6;

struct RunSpec {
  ModelConfig model;
  DataOptions data;
  TrainOptions train;
  int schema_version = kTrainingSchemaVersion;  // of the training.json it was read from
};

// The named preset ("paper": the paper's sizes, "cpu": for 2 cores) of a task and variant.
RunSpec preset_spec(const std::string& preset, const std::string& task, Recall recall, Norm norm);

// TrainOptions's table (util/options.h): its flags (through run/run_options.h's run_options),
// its sweep keys, training.json's "train" object and the checks.
const OptionTable<TrainOptions>& train_option_table();

// Throws OptionError naming the first bad training option (or looplab::Error for the model).
void check(const RunSpec& spec);

// The settings in which two specs differ, as "train.epochs: 60 here, 24 there" (model, train
// and data keys as config.json and training.json spell them); empty when they agree.
std::vector<std::string> differences(const RunSpec& here, const RunSpec& there);

// training.json: {"schema_version", "train": TrainOptions, "data": DataOptions}.
nlohmann::json to_json(const TrainOptions& o);
TrainOptions train_options_from_json(const nlohmann::json& j, const std::string& source);

}  // namespace looplab
