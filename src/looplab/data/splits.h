// The train, val and hard splits of a task as tensors (SPEC section 3): the task's examples
// (tasks/task.h, generated or read) as they go into the model. Training and evaluation both
// call this, so a run folder's recorded data options always give back the same examples.
#pragma once

#include <torch/torch.h>

#include <string>

#include "looplab/tasks/task.h"

namespace looplab {

struct Split {
  std::string name;
  torch::Tensor inputs;   // [N, positions, C_in], float32
  torch::Tensor targets;  // [N, positions], int64 class per position
  int64_t size() const { return inputs.size(0); }
};

// Examples as tensors (copied).
Split to_split(const std::string& name, const Examples& examples);

// split: "train", "val" or "hard" of data.task. Throws looplab::Error for an unknown task or
// split, or a bad file.
Split load_split(const DataOptions& data, const std::string& split);

}  // namespace looplab
