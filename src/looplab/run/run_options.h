// The options of a run that a user sets by name over a preset: one table, read by
// `looplab train` (its flags) and by sweep files (their keys), so that both speak the same
// names (`lr`, `seed`, `train-count`, ...) and apply them the same way. No LibTorch.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "looplab/run/run_spec.h"

namespace looplab {

// A value as given: an integer, a number, a string or a flag.
using OptionValue = std::variant<int64_t, double, std::string, bool>;

struct RunOption {
  enum class Kind { kInt, kUnsigned, kNumber, kText, kFlag };
  std::string name;  // the flag without "--", and the sweep file's key
  std::string old_name;  // a name it had before, still accepted (flag and key); "" if none
  std::string help;
  Kind kind;
  // Sets the value; throws looplab::Error when it has the wrong type ("expected an integer").
  std::function<void(RunSpec&, const OptionValue&)> apply;
};

// Every option of `looplab train` that changes a run's settings over its preset (not task,
// recall, norm and preset themselves, which choose the preset).
const std::vector<RunOption>& run_options();
// nullptr when there is no option of that name.
const RunOption* find_run_option(const std::string& name);

// The names that choose the preset rather than override it.
inline const std::vector<std::string>& preset_keys() {
  static const std::vector<std::string> k = {"task", "recall", "norm", "preset"};
  return k;
}

// A value as text, the same everywhere it names a run: integers in decimal, numbers in the
// shortest form that reads back the same (3e-4 -> "0.0003"), flags as true/false.
std::string to_text(const OptionValue& v);

}  // namespace looplab
