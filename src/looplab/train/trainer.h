// The training loop of the paper (SPEC section 2): AdamW, per-epoch warm-up and cool-down,
// gradient clipping, the progressive loss with its n/k draws, a run folder (run/run_folder.h) that
// can be resumed after a stop or a kill: config.json, training.json, model.safetensors (latest),
// best.safetensors, checkpoint.safetensors (weights, AdamW state, epochs done, random state: one
// atomic file) and metrics.jsonl (one line per epoch).
#pragma once

#include <torch/torch.h>

#include <string>

#include "looplab/distributed/ranks.h"
#include "looplab/run/run_spec.h"

namespace looplab {

// Starts a new run in `dir`; refuses a directory that already holds a checkpoint.
// On several `ranks` (data-parallel, docs/distributed.md) every rank calls it: each takes its
// part of every batch, the gradients are averaged before clipping and AdamW, rank 0 alone
// sets the folder up and writes it, and the others read their settings from it.
void train(const std::string& dir, const RunSpec& spec, torch::Device device, Ranks& ranks);
void train(const std::string& dir, const RunSpec& spec, torch::Device device);
// Continues the run in `dir` from its last completed epoch; `epochs` > 0 changes the total.
void resume(const std::string& dir, int64_t epochs, torch::Device device, Ranks& ranks);
void resume(const std::string& dir, int64_t epochs, torch::Device device);

}  // namespace looplab
