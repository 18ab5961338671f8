// looplab demo (stages/demo.h).
#include "looplab/stages/demo.h"

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "looplab/eval/evaluate.h"
#include "looplab/run/model_folder.h"
#include "looplab/run/run_folder.h"
#include "looplab/tasks/registry.h"
#include "looplab/train/trainer.h"
#include "looplab/util/error.h"
#include "looplab/util/progress.h"

namespace looplab {

namespace {

CurveReport run_split(LoopedTransformerImpl& model, const DataOptions& data, const std::string& split, int64_t iters,
                      const std::string& label, const std::string& unit) {
  const Split s = load_split(data, split);
  const auto start = std::chrono::steady_clock::now();
  Progress progress("  " + label + ", " + split, Progress::Log::kNone);
  CurveReport c = evaluate_curve(model, s, iters, 100, std::ref(progress));
  progress.clear();
  std::printf("  %-40s %-5s %5lld examples of %3lld %s, %lld iterations: %.0f s\n", label.c_str(), split.c_str(),
              static_cast<long long>(s.size()), static_cast<long long>(s.inputs.size(1)), unit.c_str(),
              static_cast<long long>(iters),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  std::fflush(stdout);
  return c;
}

struct Column {
  std::string label;
  CurveReport val, hard;
};

// Exact accuracy after a few numbers of iterations, a pair of columns (val, hard) per model.
void print_table(const Demo& d, const std::vector<Column>& columns, int64_t iters) {
  std::printf("%10s", "");
  for (const Column& c : columns) std::printf(" | %-30s", c.label.c_str());
  std::printf("\n%10s", "iterations");
  for (size_t i = 0; i < columns.size(); ++i) std::printf(" | %14s %15s", d.val_label.c_str(), d.hard_label.c_str());
  std::printf("\n");
  std::vector<int64_t> rows;
  for (int64_t r : {1, 5, 10, 30, 50, 100, 200, 300, 400, 500})
    if (r <= iters) rows.push_back(r);
  if (rows.back() != iters) rows.push_back(iters);
  for (int64_t r : rows) {
    std::printf("%10lld", static_cast<long long>(r));
    for (const Column& c : columns)
      std::printf(" | %13.1f%% %14.1f%%", 100 * c.val.exact[r - 1], 100 * c.hard.exact[r - 1]);
    std::printf("\n");
  }
}

// `weights`: "final" or "best" (run/run_folder.h).
Column evaluate_model(const std::string& folder, const std::string& label, int64_t val_count, int64_t hard_count,
                      int64_t iters, const std::string& unit, const std::string& weights) {
  const RunFolder run(folder);
  LoopedTransformer model = load_model(run.path(), torch::kCPU, torch::kFloat32, run.weights(weights));
  model->eval();
  DataOptions data = run.spec().data;
  data.val_count = val_count;
  data.hard_count = hard_count;
  Column c{label, run_split(*model, data, "val", iters, label, unit), {}};
  c.hard = run_split(*model, data, "hard", iters, label, unit);
  return c;
}

// The paper preset's run, where it is shipped: how far its training went, then its table.
void show_paper_run(const Demo& d, const std::string& models, int64_t val_count, int64_t hard_count, int64_t iters) {
  const RunFolder run(models + "/" + d.paper_run.folder);
  if (!run.has(RunFolder::kWeights)) {
    std::printf("\n(%s: no trained model there, so the paper preset's run is not shown.)\n", run.path().c_str());
    return;
  }
  const std::vector<EpochMetrics> m = run.metrics();
  double seconds = 0;
  for (const EpochMetrics& e : m) seconds += e.seconds;
  const int64_t epochs = run.spec().train.epochs;
  std::printf("\nThe paper's own prefix-sums run, trained here: %s, lr %g;\n%zu of %lld epochs, %.1f hours on 2 cores%s.\n",
              d.paper_run.label.c_str(), run.spec().train.lr, m.size(), static_cast<long long>(epochs), seconds / 3600,
              static_cast<int64_t>(m.size()) < epochs ? " (still in training)" : "");
  std::printf("Its final weights (epoch %zu, as the paper reports) on %lld val and %lld hard examples (fewer: width 256 "
              "costs 16x per iteration):\n",
              m.size(), static_cast<long long>(val_count), static_cast<long long>(hard_count));
  std::fflush(stdout);
  const Column c = evaluate_model(run.path(), "width 256 (paper preset)", val_count, hard_count, iters, d.unit, "final");
  std::printf("\n");
  print_table(d, {c}, iters);
  std::printf("\n%s", d.paper_run_text.c_str());
}

}  // namespace

void run_demo(const DemoOptions& o) {
  if (o.val_count < 1 || o.hard_count < 1 || o.iters < 1) throw Error("counts and --iters must be >= 1");
  if (o.paper_val_count < -1 || o.paper_hard_count < -1)
    throw Error("--paper-val-count and --paper-hard-count must be >= 0 (0: do not show the paper's run)");
  const Task* t = nullptr;
  for (const Task* c : all_tasks())
    if (!t && c->demo()) t = c;
  if (!t) throw Error("demo: no task has a demo");
  const Demo& d = *t->demo();
  std::printf("%s\nEvaluating the shipped models (%s):\n", d.title.c_str(), o.models.c_str());
  std::vector<Column> columns;
  for (const Demo::Contender& c : d.contenders) {
    // The final weights, as the paper reports; a folder shipped with only its best
    // epoch's says so in its label.
    const std::string folder = o.models + "/" + c.folder;
    const bool final = RunFolder(folder).has(RunFolder::kWeights);
    columns.push_back(evaluate_model(folder, final ? c.label : c.label + " (best epoch)", o.val_count,
                                     o.hard_count, o.iters, d.unit, final ? "final" : "best"));
  }
  std::printf("\nExact accuracy (%% of examples with every position right) after each number of iterations:\n");
  print_table(d, columns, o.iters);
  std::printf("\n%s", d.conclusion.c_str());
  const int64_t paper_val = o.paper_val_count >= 0 ? o.paper_val_count : d.paper_run_val_count;
  const int64_t paper_hard = o.paper_hard_count >= 0 ? o.paper_hard_count : d.paper_run_hard_count;
  if (!d.paper_run.folder.empty() && paper_val > 0 && paper_hard > 0)
    show_paper_run(d, o.models, paper_val, paper_hard, o.iters);
  if (o.live_epochs == 0) return;
  std::printf("\n%s\n", d.live_title.c_str());
  std::fflush(stdout);
  std::filesystem::remove_all(o.live_dir);
  RunSpec spec = preset_spec("cpu", t->name(), parse_recall(d.live_recall), parse_norm(d.live_norm));
  spec.train.epochs = o.live_epochs > 0 ? o.live_epochs : d.live_epochs;
  spec.train.batch = d.live_batch;
  spec.train.lr = d.live_lr;
  spec.train.cooldown_epoch = d.live_cooldown_epoch;
  spec.data.train_count = d.live_train_count;
  // float32: the fused block's training step is now 1.8-2.1x faster than bfloat16's
  // plain path at this batch (docs/performance.md, "bfloat16"), which it used to beat.
  spec.data.val_count = d.live_val_count;
  spec.train.precision = o.precision;
  train(o.live_dir, spec, torch::kCPU);
}

}  // namespace looplab
