// The options of a run that a user sets by name over a preset: one table, read by
// `looplab train` (its flags) and by sweep files (their keys), so that both speak the same
// names (`lr`, `seed`, `train-count`, ...) and apply them the same way. It is made of
// TrainOptions's and DataOptions's own tables (run/run_spec.h, tasks/task.h), which also write
// and read training.json, and the model's sizes. No LibTorch.
#pragma once

#include <string>
#include <vector>

#include "looplab/run/run_spec.h"
#include "looplab/util/options.h"

namespace looplab {

using RunOption = Option<RunSpec>;

// Every option of `looplab train` that changes a run's settings over its preset (not task,
// recall, norm and preset themselves, which choose the preset).
const OptionTable<RunSpec>& run_options();
// nullptr when there is no option of that name (or old name).
const RunOption* find_run_option(const std::string& name);

// The names that choose the preset rather than override it.
inline const std::vector<std::string>& preset_keys() {
  static const std::vector<std::string> k = {"task", "recall", "norm", "preset"};
  return k;
}

}  // namespace looplab
