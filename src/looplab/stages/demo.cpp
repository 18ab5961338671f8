// looplab demo (stages/demo.h).
#include "looplab/stages/demo.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <tuple>

#include "looplab/eval/evaluate.h"
#include "looplab/run/model_folder.h"
#include "looplab/run/reports.h"
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

// A split's exact accuracy at its last iteration and its example count in a stored evaluation
// (scripts/paper-prefix-sums's eval-val.json and eval-hard.json); count 0 where there is none.
std::pair<double, int64_t> stored_exact(const RunFolder& run, const std::string& split) {
  const std::string file = run.file("eval-" + split + ".json");
  if (!std::filesystem::exists(file)) return {0, 0};
  const EvalReport r = read_report<EvalReport>(file);
  const auto it = r.splits.find(split);
  if (it == r.splits.end() || it->second.exact.empty()) return {0, 0};
  return {100 * it->second.exact.back(), it->second.count};
}

// The paper's configuration, one folder per seed: each seed's final weights at iteration `iters`
// on a few examples, beside its full stored evaluation, their mean and the paper's values.
void show_paper_seeds(const Demo& d, const std::string& models, int64_t val_count, int64_t hard_count, int64_t iters) {
  std::printf("\n%s\nEach seed's final weights (as the paper reports) at iteration %lld, here on %lld val and %lld hard "
              "inputs (width 256 costs 16x per iteration), beside its full evaluation:\n",
              d.paper_config.c_str(), static_cast<long long>(iters), static_cast<long long>(val_count),
              static_cast<long long>(hard_count));
  std::fflush(stdout);
  struct Row {
    std::string seed;
    double val = 0, hard = 0, full_val = 0, full_hard = 0;
    int64_t full_val_count = 0, full_hard_count = 0;
  };
  std::vector<Row> rows;
  for (const std::string& folder : d.paper_seeds) {
    const RunFolder run(models + "/" + folder);
    if (!run.has(RunFolder::kWeights)) {
      std::printf("  (%s: no trained model there, so this seed is not shown.)\n", run.path().c_str());
      continue;
    }
    const Column c = evaluate_model(run.path(), folder, val_count, hard_count, iters, d.unit, "final");
    Row r{std::to_string(run.spec().train.seed), 100 * c.val.exact[iters - 1], 100 * c.hard.exact[iters - 1]};
    std::tie(r.full_val, r.full_val_count) = stored_exact(run, "val");
    std::tie(r.full_hard, r.full_hard_count) = stored_exact(run, "hard");
    rows.push_back(r);
  }
  if (rows.empty()) return;
  auto full = [](double v, int64_t n) {
    char s[32];
    if (n > 0) std::snprintf(s, sizeof s, "%.2f%% of %lld", v, static_cast<long long>(n));
    else std::snprintf(s, sizeof s, "not evaluated");
    return std::string(s);
  };
  std::printf("\n%-10s | %9s %9s | %-18s %-18s\n", "seed", "val here", "hard here", "val, full", "hard, full");
  double val_sum = 0, hard_sum = 0;
  int64_t full_rows = 0;
  for (const Row& r : rows) {
    std::printf("%-10s | %8.1f%% %8.1f%% | %-18s %-18s\n", r.seed.c_str(), r.val, r.hard,
                full(r.full_val, r.full_val_count).c_str(), full(r.full_hard, r.full_hard_count).c_str());
    if (r.full_val_count > 0 && r.full_hard_count > 0) {
      val_sum += r.full_val;
      hard_sum += r.full_hard;
      ++full_rows;
    }
  }
  auto percent = [](double v) {
    char s[16];
    std::snprintf(s, sizeof s, "%.2f%%", v);
    return std::string(s);
  };
  if (full_rows > 0)
    std::printf("%-10s | %19s | %-18s %-18s\n", ("mean of " + std::to_string(full_rows)).c_str(), "",
                percent(val_sum / full_rows).c_str(), percent(hard_sum / full_rows).c_str());
  std::printf("%-10s | %19s | %-18s %-18s\n", "the paper", "", percent(d.paper_val).c_str(),
              percent(d.paper_hard).c_str());
  std::printf("\n%s", d.paper_text.c_str());
}

}  // namespace

void run_demo(const DemoOptions& o) {
  if (o.val_count < 1 || o.hard_count < 1 || o.iters < 1) throw Error("counts and --iters must be >= 1");
  if (o.paper_val_count < -1 || o.paper_hard_count < -1)
    throw Error("--paper-val-count and --paper-hard-count must be >= 0 (0: do not show the paper's seeds)");
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
  const int64_t paper_val = o.paper_val_count >= 0 ? o.paper_val_count : d.paper_val_count;
  const int64_t paper_hard = o.paper_hard_count >= 0 ? o.paper_hard_count : d.paper_hard_count;
  if (!d.paper_seeds.empty() && paper_val > 0 && paper_hard > 0)
    show_paper_seeds(d, o.models, paper_val, paper_hard, o.iters);
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
