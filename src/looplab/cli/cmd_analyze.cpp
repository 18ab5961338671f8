// looplab analyze DIR: the fixed-point analysis of a trained model (reachability, input
// dependence, initialization independence, overthinking), written to DIR/analysis.json.
// looplab analyze regions | anisotropy | phase: the paper's geometry of the scalar model.
#include <cstdio>
#include <iostream>
#include <map>

#include "looplab/analysis/model_report.h"
#include "looplab/cli/commands.h"
#include "looplab/run/model_dir.h"
#include "looplab/run/run_dir.h"
#include "looplab/run/stages.h"
#include "looplab/runtime.h"
#include "looplab/util/error.h"
#include "looplab/util/list.h"
#include "looplab/util/progress.h"

namespace looplab::cli {

Command add_analyze(CLI::App& parent) {
  auto* app = parent.add_subcommand(
      "analyze", "Fixed-point analysis of a trained model (DIR), or the scalar model's geometry (regions, anisotropy, phase)");
  struct Options {
    std::string dir, splits = "val", weights = "final", device = "cpu", dtype = "float32";
    int64_t count = 100, iters = 500, detail = 10, batch = 100, arnoldi = 60;
    double tolerance = 1e-4;
    uint64_t seed = 0;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  app->add_option("dir", o->dir, "run or model directory");
  app->add_option("--split", o->splits, "comma-separated splits: train, val, hard")->capture_default_str();
  app->add_option("--count", o->count, "examples per split for convergence and accuracy")->capture_default_str();
  app->add_option("--iters", o->iters, "iterations to run (MAX)")->capture_default_str();
  app->add_option("--tolerance,--tol", o->tolerance, "relative step below which an iteration has converged")
      ->capture_default_str();
  app->add_option("--detail", o->detail,
                  "how many of the examples get the Jacobian analyses (radius, sensitivity, init independence)")
      ->capture_default_str();
  app->add_option("--arnoldi-steps", o->arnoldi, "largest Krylov space for the spectral radius")->capture_default_str();
  app->add_option("--seed", o->seed, "sensitivity directions and initial noise")->capture_default_str();
  app->add_option("--weights", o->weights, "final (the last epoch's, as the paper reports) or best (the best val epoch's)")->capture_default_str();
  app->add_option("--batch", o->batch, "examples per batch")->capture_default_str();
  app->add_option("--device", o->device, "cpu, cuda or cuda:N")->capture_default_str();
  app->add_option("--dtype", o->dtype, "dtype of the convergence pass (the Jacobian analyses use float64)")
      ->capture_default_str();
  app->add_flag("--json", o->json, "print analysis.json to stdout instead of the summary");

  std::vector<Command> geometry;
  add_geometry_commands(app, geometry);
  app->require_subcommand(0, 1);

  return {app, [o, geometry] {
            for (const Command& c : geometry)
              if (c.app->parsed()) return c.run();
            if (o->dir.empty()) throw Error("analyze: give a run or model directory, or one of: regions, anisotropy, phase");
            if (o->count < 1 || o->iters < 1 || o->detail < 0 || o->batch < 1 || o->arnoldi < 1 ||
                !(o->tolerance > 0))
              throw Error("analyze: --count, --iters, --batch and --arnoldi-steps must be >= 1, --detail >= 0, --tolerance > 0");
            AnalyzeRunOptions a;
            a.splits = split_list(o->splits);
            a.count = o->count;
            a.analysis.convergence.max_iters = o->iters;
            a.analysis.convergence.tolerance = o->tolerance;
            a.analysis.batch = o->batch;
            a.analysis.detail_count = o->detail;
            a.analysis.arnoldi_steps = o->arnoldi;
            a.analysis.seed = o->seed;
            a.weights = o->weights;
            a.device = o->device;
            a.dtype = o->dtype;
            std::string text;
            const AnalysisReport report = analyze_run(o->dir, a, &text);
            if (o->json) {
              std::cout << nlohmann::json(report).dump(2) << "\n";
              return;
            }
            if (report.recall_spectral_radius.empty()) std::printf("recall: none (autonomous model)\n");
            for (size_t b = 0; b < report.recall_spectral_radius.size(); ++b)
              std::printf("recall matrix of block %zu: rho(Wx) = %.4f\n", b, report.recall_spectral_radius[b]);
            std::cout << text;
            std::printf("wrote %s/analysis.json\n", o->dir.c_str());
          }};
}

}  // namespace looplab::cli
