#include "looplab/sweep/execute.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "looplab/io/atomic_file.h"
#include "looplab/run/run_dir.h"
#include "looplab/run/stages.h"
#include "looplab/runtime.h"
#include "looplab/sweep/state.h"
#include "looplab/train/trainer.h"
#include "looplab/util/error.h"

namespace looplab::sweep {

namespace fs = std::filesystem;

ExecResult execute_run(const Sweep& sw, int64_t index, const std::string& device) {
  if (index < 0 || index >= static_cast<int64_t>(sw.runs.size()))
    throw Error(sw.file + ": no run " + std::to_string(index) + " (the sweep has " + std::to_string(sw.runs.size()) +
                ", 0.." + std::to_string(sw.runs.size() - 1) + ")");
  const Run& run = sw.runs[static_cast<size_t>(index)];
  const std::string dir = sw.run_dir(run);
  const auto lock = RunLock::try_acquire(dir);
  if (!lock) return ExecResult::kBusy;
  if (fs::exists(dir + "/" + kDoneFile)) return ExecResult::kDone;
  const auto start = std::chrono::steady_clock::now();
  std::printf("sweep %s: run %lld, %s\n", sw.name.c_str(), static_cast<long long>(index), run.name.c_str());
  std::fflush(stdout);
  try {
    const torch::Device where = parse_device(device);
    // A folder with settings resumes (from its checkpoint, or from the start if it has none),
    // but only if they are still the file's: an edited [base] keeps the folder names, and
    // silently finishing a run under its old settings would mix two experiments in one table.
    const RunDir folder(dir);
    if (folder.has(RunDir::kTraining)) {
      const auto diff = differences(folder.spec(), run.spec);
      if (!diff.empty()) {
        std::string list;
        for (const auto& d : diff) list += "\n  " + d;
        throw Error(dir + ": was started with other settings than " + sw.file + " now gives (here: the folder, there: the file):" +
                    list + "\nremove the folder to start it again, or restore the file");
      }
      resume(dir, 0, where);
    } else {
      train(dir, run.spec, where);
    }
    EvalRunOptions e;
    e.splits = sw.eval.splits;
    e.last = sw.eval.iters;
    e.count = sw.eval.count;
    e.batch = sw.eval.batch;
    e.device = device;
    evaluate_run(dir, e);
    if (sw.analyze.enabled && run.spec.model.recall != Recall::kFixed) {
      AnalyzeRunOptions a;
      a.splits = sw.analyze.splits;
      a.count = sw.analyze.count;
      a.analysis.convergence.max_iters = sw.analyze.iters;
      a.analysis.convergence.tolerance = sw.analyze.tolerance;
      a.analysis.detail_count = sw.analyze.detail;
      a.device = device;
      analyze_run(dir, a);
    }
  } catch (const std::exception& e) {
    write_file_atomic(dir + "/" + kFailedFile, nlohmann::json{{"schema_version", 1}, {"error", e.what()}}.dump(2) + "\n");
    throw;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  write_file_atomic(dir + "/" + kDoneFile, nlohmann::json{{"schema_version", 1}, {"seconds", seconds}}.dump(2) + "\n");
  fs::remove(dir + "/" + kFailedFile);
  return ExecResult::kDone;
}

}  // namespace looplab::sweep
