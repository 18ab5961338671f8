#include "looplab/sweep/execute.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "looplab/io/atomic_file.h"
#include "looplab/run/run_folder.h"
#include "looplab/stages/stages.h"
#include "looplab/platform/runtime.h"
#include "looplab/sweep/state.h"
#include "looplab/train/trainer.h"
#include "looplab/util/error.h"

namespace looplab::sweep {

namespace fs = std::filesystem;

namespace {

// Training is over: every epoch is in metrics.jsonl and the final weights are there. A sweep's
// run folders are committed without their checkpoints (.gitignore), so a run stopped in its
// evaluation comes back without one; resuming it would train it again from the start.
bool trained_without_checkpoint(const std::string& dir) {
  const RunFolder f(dir);
  if (!f.has(RunFolder::kTraining) || !f.has(RunFolder::kWeights) || !f.has(RunFolder::kMetrics) ||
      f.has(RunFolder::kCheckpoint))
    return false;
  return static_cast<int64_t>(read_metrics(f.file(RunFolder::kMetrics)).size()) >= f.spec().train.epochs;
}

// A folder with settings resumes (from its checkpoint, or from the start if it has none).
void resume_or_train(const std::string& dir, const Run& run, const std::string& device, Ranks& ranks) {
  const torch::Device where = parse_device(device);
  if (ranks.leader() ? RunFolder(dir).has(RunFolder::kTraining) : false)
    resume(dir, 0, where, ranks);
  else
    train(dir, run.spec, where, ranks);  // the other ranks: wait for rank 0, either way
}

}  // namespace

namespace {

// The settings a run folder was started with must still be the file's: an edited [base] keeps
// the folder names, and silently finishing a run under its old settings would mix two
// experiments in one table.
void check_unchanged(const Sweep& sw, const Run& run, const std::string& dir) {
  const RunFolder folder(dir);
  if (!folder.has(RunFolder::kTraining)) return;
  RunSpec wanted = run.spec;
  wanted.data = with_absolute_files(wanted.data);  // as train() records them
  const auto diff = differences(folder.spec(), wanted);
  if (diff.empty()) return;
  std::string list;
  for (const auto& d : diff) list += (list.empty() ? "" : "; ") + d;
  throw Error(dir + ": was started with other settings than " + sw.file + " now gives (here: the folder, there: the file): " +
              list + "; remove the folder to start it again, or restore the file");
}

}  // namespace

ExecResult execute_run(const Sweep& sw, int64_t index, const std::string& device, Ranks& ranks) {
  if (index < 0 || index >= static_cast<int64_t>(sw.runs.size()))
    throw Error(sw.file + ": no run " + std::to_string(index) + " (the sweep has " + std::to_string(sw.runs.size()) +
                ", 0.." + std::to_string(sw.runs.size() - 1) + ")");
  const Run& run = sw.runs[static_cast<size_t>(index)];
  const std::string dir = sw.run_folder(run);
  // Rank 0 decides whether the run is to be worked on, and tells the other ranks.
  if (!ranks.leader()) {
    const std::string said = ranks.await("exec");
    if (said == "busy") return ExecResult::kBusy;
    if (said == "done" || said == "trained") return ExecResult::kDone;
    if (said != "go") throw Error("rank 0 did not start run " + std::to_string(index) + ": " + said);
    resume_or_train(dir, run, device, ranks);
    return ExecResult::kDone;
  }
  const auto lock = RunLock::try_acquire(dir);
  if (!lock) return ranks.announce("exec", "busy"), ExecResult::kBusy;
  if (fs::exists(dir + "/" + RunFolder::kSweepDone)) return ranks.announce("exec", "done"), ExecResult::kDone;
  const auto start = std::chrono::steady_clock::now();
  std::printf("sweep %s: run %lld, %s\n", sw.name.c_str(), static_cast<long long>(index), run.name.c_str());
  std::fflush(stdout);
  try {
    try {
      check_unchanged(sw, run, dir);
    } catch (const std::exception& e) {
      ranks.announce("exec", e.what());
      throw;
    }
    if (trained_without_checkpoint(dir)) {
      ranks.announce("exec", "trained");  // rank 0 evaluates alone, as after training
    } else {
      ranks.announce("exec", "go");
      resume_or_train(dir, run, device, ranks);
    }
    EvalRunOptions e = sw.eval;
    e.device = device;
    evaluate_run(dir, e);
    if (sw.analyze_enabled && run.spec.model.recall != Recall::kFixed) {
      AnalyzeRunOptions a = sw.analyze;
      a.device = device;
      analyze_run(dir, a);
    }
  } catch (const std::exception& e) {
    mark_failed(dir, e.what());
    throw;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  mark_done(dir, seconds);
  fs::remove(dir + "/" + RunFolder::kSweepFailed);
  return ExecResult::kDone;
}

ExecResult execute_run(const Sweep& sw, int64_t index, const std::string& device) {
  Ranks one;
  return execute_run(sw, index, device, one);
}

}  // namespace looplab::sweep
