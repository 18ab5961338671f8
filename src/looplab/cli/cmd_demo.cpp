// looplab demo: the shipped models of a task's demo (tasks/task.h; the paper's central
// contrast) run for up to 500 iterations on val and hard inputs side by side, then a short
// training run shows training at work.
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "looplab/cli/commands.h"
#include "looplab/eval/evaluate.h"
#include "looplab/model/model_dir.h"
#include "looplab/run/run_dir.h"
#include "looplab/tasks/registry.h"
#include "looplab/train/trainer.h"
#include "looplab/util/error.h"
#include "looplab/util/progress.h"

namespace looplab::cli {

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

}  // namespace

Command add_demo(CLI::App& parent) {
  auto* app = parent.add_subcommand("demo", "The paper's contrast: recall against autonomous, trained short, tested long");
  struct Options {
    std::string models = "models", live_dir = "runs/demo-live";
    int64_t val_count = 500, hard_count = 50, iters = 500, live_epochs = -1;
  };
  auto o = std::make_shared<Options>();
  app->add_option("--models", o->models, "directory holding the shipped model directories")->capture_default_str();
  app->add_option("--val-count", o->val_count, "val examples")->capture_default_str();
  app->add_option("--hard-count", o->hard_count, "hard examples")->capture_default_str();
  app->add_option("--iters", o->iters, "most test iterations")->capture_default_str();
  app->add_option("--live-epochs", o->live_epochs, "epochs of the short live training run (0: skip; default: the task's demo's)");
  app->add_option("--live-dir", o->live_dir, "run directory of the live training run (replaced)")->capture_default_str();
  return {app, [o] {
            if (o->val_count < 1 || o->hard_count < 1 || o->iters < 1) throw Error("counts and --iters must be >= 1");
            const Task* t = nullptr;
            for (const Task* c : all_tasks())
              if (!t && c->demo()) t = c;
            if (!t) throw Error("demo: no task has a demo");
            const Demo& d = *t->demo();
            std::printf("%s\nEvaluating the shipped models (%s):\n", d.title.c_str(), o->models.c_str());
            std::vector<std::pair<CurveReport, CurveReport>> curves;
            for (const Demo::Contender& c : d.contenders) {
              const RunDir run(o->models + "/" + c.folder);
              LoopedTransformer model = load_model(run.path(), torch::kCPU, torch::kFloat32, RunDir::kBest);
              model->eval();
              DataOptions data = run.spec().data;
              data.val_count = o->val_count;
              data.hard_count = o->hard_count;
              curves.emplace_back(run_split(*model, data, "val", o->iters, c.label, d.unit),
                                  run_split(*model, data, "hard", o->iters, c.label, d.unit));
            }
            std::printf("\nExact accuracy (%% of examples with every position right) after each number of iterations:\n");
            std::printf("%10s | %-30s | %-30s\n", "", d.contenders[0].label.c_str(), d.contenders[1].label.c_str());
            std::printf("%10s | %14s %15s | %14s %15s\n", "iterations", d.val_label.c_str(), d.hard_label.c_str(),
                        d.val_label.c_str(), d.hard_label.c_str());
            std::vector<int64_t> rows;
            for (int64_t r : {1, 5, 10, 30, 50, 100, 200, 300, 400, 500})
              if (r <= o->iters) rows.push_back(r);
            if (rows.back() != o->iters) rows.push_back(o->iters);
            for (int64_t r : rows)
              std::printf("%10lld | %13.1f%% %14.1f%% | %13.1f%% %14.1f%%\n", static_cast<long long>(r),
                          100 * curves[0].first.exact[r - 1], 100 * curves[0].second.exact[r - 1],
                          100 * curves[1].first.exact[r - 1], 100 * curves[1].second.exact[r - 1]);
            std::printf("\n%s", d.conclusion.c_str());
            if (o->live_epochs == 0) return;
            std::printf("\n%s\n", d.live_title.c_str());
            std::fflush(stdout);
            std::filesystem::remove_all(o->live_dir);
            RunSpec spec = preset_spec("cpu", t->name(), parse_recall(d.live_recall), parse_norm(d.live_norm));
            spec.train.epochs = o->live_epochs > 0 ? o->live_epochs : d.live_epochs;
            spec.train.batch = d.live_batch;
            spec.train.lr = d.live_lr;
            spec.train.cooldown_epoch = d.live_cooldown_epoch;
            spec.data.train_count = d.live_train_count;
            // float32: the fused block's training step is now 1.8-2.1x faster than bfloat16's
            // plain path at this batch (docs/performance.md, "bfloat16"), which it used to beat.
            spec.data.val_count = d.live_val_count;
            train(o->live_dir, spec, torch::kCPU);
          }};
}

}  // namespace looplab::cli
