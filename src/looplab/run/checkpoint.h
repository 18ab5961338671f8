// checkpoint.safetensors, the file that lets a run go on after a stop or a kill: written last in
// each epoch (train/trainer.cpp keeps the write order), read when the run resumes. Its tensors
// come in named groups, stored under "GROUP.NAME" ("model": the trained weights, "adamw": the
// optimizer's state, "ema": the weight average); its metadata says how far the run got and where
// its best epoch was.
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>

#include "looplab/run/run_folder.h"

namespace looplab {

struct Checkpoint {
  int64_t epochs_done = 0;
  std::string rng_state;  // the run's random generator (util/random.h), as text
  // The best epoch by val exact accuracy, ties broken by per-position accuracy (a task whose
  // exact accuracy stays 0 for a while keeps its best model); -1 before the first epoch.
  double best_val = -1, best_val_position = -1;
  int64_t best_epoch = -1;
  // group -> tensor name -> tensor
  std::map<std::string, std::map<std::string, torch::Tensor>> groups;
};

// Writes run's checkpoint.safetensors atomically.
void write_checkpoint(const RunFolder& run, const Checkpoint& c);
// Reads it; a missing, corrupt or incomplete file is a looplab::Error naming it.
Checkpoint read_checkpoint(const RunFolder& run);

}  // namespace looplab
