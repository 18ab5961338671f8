// looplab demo: the paper's central contrast on prefix sums. An external-recall post-norm
// model and an autonomous one, both trained on 32-bit inputs, are run for up to 500
// iterations on 32-bit val and 512-bit hard inputs; then a short training run shows training
// at work. The two models are shipped in models/ (docs/presets.md says how they were made).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <unistd.h>

#include "looplab/cli/commands.h"
#include "looplab/eval/evaluate.h"
#include "looplab/model/model_dir.h"
#include "looplab/train/trainer.h"
#include "looplab/util/error.h"

namespace looplab::cli {

namespace {

struct Contender {
  std::string label, dir;
  IterationCurve val, hard;
};

IterationCurve run_split(LoopedTransformerImpl& model, const DataSettings& data, const std::string& split,
                         int64_t iters, const std::string& label) {
  const bool interactive = isatty(fileno(stderr));
  const Split s = load_split(data, split);
  const auto start = std::chrono::steady_clock::now();
  IterationCurve c = evaluate_curve(model, s, iters, 100, [&](int64_t done, int64_t total) {
    if (interactive)
      std::fprintf(stderr, "\r  %s, %s: %lld/%lld examples", label.c_str(), split.c_str(),
                   static_cast<long long>(done), static_cast<long long>(total));
  });
  if (interactive) std::fprintf(stderr, "\r%79s\r", "");
  std::printf("  %-40s %-5s %5lld examples of %3lld bits, %lld iterations: %.0f s\n", label.c_str(), split.c_str(),
              static_cast<long long>(s.size()), static_cast<long long>(s.inputs.size(1)),
              static_cast<long long>(iters),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  std::fflush(stdout);
  return c;
}

}  // namespace

Command add_demo(CLI::App& parent) {
  auto* app = parent.add_subcommand("demo", "The paper's prefix-sums contrast: recall against autonomous, 32 -> 512 bits");
  struct Options {
    std::string models = "models", live_dir = "runs/demo-live";
    int64_t val_count = 500, hard_count = 100, iters = 500, live_epochs = 3;
  };
  auto o = std::make_shared<Options>();
  app->add_option("--models", o->models, "directory holding the shipped model directories")->capture_default_str();
  app->add_option("--val-count", o->val_count, "32-bit val examples")->capture_default_str();
  app->add_option("--hard-count", o->hard_count, "512-bit hard examples")->capture_default_str();
  app->add_option("--iters", o->iters, "most test iterations")->capture_default_str();
  app->add_option("--live-epochs", o->live_epochs, "epochs of the short live training run (0: skip)")
      ->capture_default_str();
  app->add_option("--live-dir", o->live_dir, "run directory of the live training run (replaced)")
      ->capture_default_str();
  return {app, [o] {
            if (o->val_count < 1 || o->hard_count < 1 || o->iters < 1) throw Error("counts and --iters must be >= 1");
            std::vector<Contender> contenders = {
                {"external recall, post-norm", o->models + "/prefix-sums-external-post", {}, {}},
                {"autonomous (recall none), post-norm", o->models + "/prefix-sums-none-post", {}, {}}};
            std::printf("Prefix sums: trained on 32-bit inputs, tested on 512-bit ones (paper tables 4-5).\n"
                        "Evaluating the shipped models (%s):\n",
                        o->models.c_str());
            for (Contender& c : contenders) {
              LoopedTransformer model = load_model(c.dir, torch::kCPU, torch::kFloat32, kBestWeightsFile);
              model->eval();
              DataSettings data = read_run_spec(c.dir).data;
              data.val_count = o->val_count;
              data.hard_count = o->hard_count;
              c.val = run_split(*model, data, "val", o->iters, c.label);
              c.hard = run_split(*model, data, "hard", o->iters, c.label);
            }
            std::printf("\nExact accuracy (%% of examples with every bit right) after each number of iterations:\n");
            std::printf("%10s | %-30s | %-30s\n", "", contenders[0].label.c_str(), contenders[1].label.c_str());
            std::printf("%10s | %14s %15s | %14s %15s\n", "iterations", "val 32-bit", "hard 512-bit", "val 32-bit",
                        "hard 512-bit");
            std::vector<int64_t> rows;
            for (int64_t t : {1, 5, 10, 30, 50, 100, 200, 300, 400, 500})
              if (t <= o->iters) rows.push_back(t);
            if (rows.back() != o->iters) rows.push_back(o->iters);
            for (int64_t t : rows)
              std::printf("%10lld | %13.1f%% %14.1f%% | %13.1f%% %14.1f%%\n", static_cast<long long>(t),
                          100 * contenders[0].val.exact[t - 1], 100 * contenders[0].hard.exact[t - 1],
                          100 * contenders[1].val.exact[t - 1], 100 * contenders[1].hard.exact[t - 1]);
            std::printf("\nThe recall model keeps improving past its 30 training iterations until the answer has\n"
                        "crossed all 512 bits (information moves 2 positions per iteration); the autonomous model\n"
                        "has no path back to its input and does not generalize.\n");
            if (o->live_epochs < 1) return;
            std::printf("\nA short live training run (external recall, post-norm, cpu preset, 2,000 examples):\n");
            std::fflush(stdout);
            std::filesystem::remove_all(o->live_dir);
            RunSpec spec = preset_spec("cpu", "prefix-sums", Recall::kExternal, Norm::kPost);
            spec.train.epochs = o->live_epochs;
            spec.data.train_count = 2000;
            spec.data.val_count = 500;
            train(o->live_dir, spec, torch::kCPU);
          }};
}

}  // namespace looplab::cli
