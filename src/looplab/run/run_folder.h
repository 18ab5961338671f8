// A run folder as a type: the names of its files, which weights to load, the run's settings
// and the data it is evaluated on. A bare model folder (config.json and model.safetensors, as
// `looplab init` writes) is a run folder without training.json. No LibTorch here (loading the
// weights is run/model_folder.h's).
#pragma once

#include <string>
#include <vector>

#include "looplab/model/config.h"
#include "looplab/run/reports.h"
#include "looplab/run/run_spec.h"

namespace looplab {

class RunFolder {
 public:
  static constexpr const char* kConfig = "config.json";
  static constexpr const char* kTraining = "training.json";
  static constexpr const char* kWeights = "model.safetensors";  // the final weights (of the last epoch done)
  static constexpr const char* kBest = "best.safetensors";      // the best val accuracy so far
  static constexpr const char* kRaw = "raw.safetensors";  // --ema: the trained weights (model and best are the EMA's)
  static constexpr const char* kCheckpoint = "checkpoint.safetensors";
  static constexpr const char* kMetrics = "metrics.jsonl";
  static constexpr const char* kEval = "eval.json";
  static constexpr const char* kEvalPartial = "eval.partial.json";  // an evaluation's sums so far
  static constexpr const char* kEvalAccelerated = "eval_accelerated.json";
  static constexpr const char* kEvalHalt = "eval_halt.json";        // eval --halt
  static constexpr const char* kEvalScaling = "eval_scaling.json";  // eval --scaling
  static constexpr const char* kEvalTrace = "eval_trace.json";      // eval --trace
  static constexpr const char* kAnalysis = "analysis.json";
  static constexpr const char* kTrainLog = "train.log";  // scripts' copy of the training output
  // A sweep's run (sweep/state.h says what each means).
  static constexpr const char* kSweepDone = "sweep_done.json";
  static constexpr const char* kSweepFailed = "sweep_failed.json";
  static constexpr const char* kSweepLock = "sweep.lock";
  static constexpr const char* kSweepLog = "sweep.log";

  explicit RunFolder(std::string path) : path_(std::move(path)) {}
  const std::string& path() const { return path_; }
  // path/name
  std::string file(const std::string& name) const;
  bool has(const std::string& name) const;  // a regular file of that name exists
  bool is_training_run() const { return has(kTraining); }

  // The weights file a user means by `which`: "final" (model.safetensors, the weights after the
  // last epoch done: at the end of training those the paper reports; "latest" is read as the
  // same) or "best" (best.safetensors, the epoch of the best val accuracy, or the final weights
  // where there is no best, e.g. a bare model folder), or "raw" (raw.safetensors: with --ema,
  // the trained weights, where final and best are the average's). Throws OptionError("weights", ...) for
  // any other name, and Error when final weights are asked of a folder that has only the best.
  std::string weights(const std::string& which) const;

  ModelConfig config() const;  // config.json
  // config.json and training.json; file names inside resolve against this folder.
  RunSpec spec() const;
  void write_spec(const RunSpec& spec) const;  // training.json (atomic)

  // The data a model is evaluated on: the run's recorded data, or the task's defaults (SPEC
  // section 3) for a bare model folder.
  DataOptions evaluation_data() const;
  // T, the iterations the model was trained with (30 for a bare model folder).
  int64_t training_iters() const;

  std::vector<EpochMetrics> metrics() const;  // empty when there is no metrics.jsonl

  // The evaluations a folder holds: eval.json (`looplab eval`) first, then every eval-NAME.json
  // by name (scripts/paper-prefix-sums keeps one per split: eval-val.json, eval-hard.json). All
  // are EvalReports. eval.partial.json (an evaluation under way) is not one.
  std::vector<std::string> eval_files() const;
  // Whether a file name is one of those: "eval.json" or "eval-NAME.json", NAME one or more of
  // letters, digits, '-' and '_'.
  static bool is_eval_file(const std::string& name);

 private:
  std::string path_;
};

// Makes the folder of a new run and returns its settings as recorded: the task's data prepared in
// it (its data pool), config.json and training.json. Data files named relative to where the
// command ran are recorded absolute, and those inside the folder relative to it (so that they
// travel with it). The folder appears whole: a new one is made under a temporary name beside it
// (DIR.partial) and renamed into place, so that after a kill at any moment it is absent or holds
// settings a resume starts from; a folder that exists already (one the user made, holding data
// files) is filled in place, its settings last. `threads`: for preparing the data.
RunSpec create_run_folder(const std::string& dir, RunSpec spec, int threads);

}  // namespace looplab
