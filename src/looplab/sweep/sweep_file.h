// A sweep file (docs/sweeps.md): a base run, axes whose product gives the runs, include and
// exclude rules, and what each run evaluates and analyses after training. TOML, read with
// toml++ (Debian's libtomlplusplus). Every run is checked here, before anything is trained, so a
// bad value is an error naming the file, line and key. No LibTorch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "looplab/run/run_options.h"
#include "looplab/run/run_spec.h"
#include "looplab/analysis/analysis_options.h"
#include "looplab/eval/eval_options.h"

namespace looplab::sweep {

// One key of a run's settings and where the file set it.
struct Setting {
  std::string key;
  OptionValue value;
  int64_t line = 0;
};

struct Run {
  int64_t index = 0;      // position in the sweep (the SLURM array index)
  std::string name;       // its folder under the sweep's runs folder: the axis values, e.g. recall-none_seed-1
  std::vector<Setting> settings;  // base, then axes or include: what made the run
  RunSpec spec;           // the checked settings of `looplab train`
  const Setting* find(const std::string& key) const;
};

struct Sweep {
  std::string file;  // as given
  std::string name;  // the file's `name`, else its stem
  std::string out;   // the runs folder: `out` relative to the file, else beside it named after its stem
  std::vector<std::string> axes;  // axis keys in file order
  std::vector<Run> runs;
  // After training each run writes eval.json (accuracy at iterations 1..iters of each split)
  // and, unless analyze_enabled is false, analysis.json. The options are looplab eval's and
  // looplab analyze's (eval/eval_options.h, analysis/analysis_options.h), with their defaults; the file sets some of them.
  EvalRunOptions eval;        // [eval]: eval_option_table()'s keys that are in_sweeps
  AnalyzeRunOptions analyze;  // [analyze]: `enabled` and analyze_option_table()'s keys that are in_sweeps
  bool analyze_enabled = true;

  std::string run_folder(const Run& r) const { return out + "/" + r.name; }
};

// Throws looplab::Error "FILE:LINE: key 'K': ..." for a malformed file, an unknown key or
// value, an axis that the base also sets, or two runs with the same settings.
Sweep load_sweep(const std::string& file);

}  // namespace looplab::sweep
