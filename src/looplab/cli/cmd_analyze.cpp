// looplab analyze DIR: the fixed-point analysis of a trained model (reachability, input
// dependence, initialization independence, overthinking), written to DIR/analysis.json.
// looplab analyze regions | anisotropy | phase: the paper's geometry of the scalar model.
#include <iostream>

#include "looplab/cli/commands.h"
#include "looplab/run/run_folder.h"
#include "looplab/stages/stages.h"
#include "looplab/util/error.h"
#include "looplab/util/list.h"

namespace looplab::cli {

Command add_analyze(CLI::App& parent) {
  auto* app = parent.add_subcommand(
      "analyze", "Fixed-point analysis of a trained model (DIR), or the scalar model's geometry (regions, anisotropy, phase)");
  struct Options {
    std::string dir, splits;
    AnalyzeRunOptions analyze;  // run/stage_options.h: the options and their defaults
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  AnalyzeRunOptions& a = o->analyze;
  analysis::AnalysisOptions& s = a.analysis;
  app->add_option("dir", o->dir, "run or model folder");
  app->add_option("--split", o->splits, "comma-separated splits: train, val, hard")->default_str(join(a.splits, ","));
  app->add_option("--count", a.count, "examples per split for convergence and accuracy")->capture_default_str();
  app->add_option("--iters", s.convergence.max_iters, "iterations to run (MAX)")->capture_default_str();
  app->add_option("--tolerance,--tol", s.convergence.tolerance, "relative step below which an iteration has converged")
      ->capture_default_str();
  app->add_option("--detail", s.detail_count,
                  "how many of the examples get the Jacobian analyses (radius, sensitivity, init independence)")
      ->capture_default_str();
  app->add_option("--arnoldi-steps", s.arnoldi_steps, "largest Krylov space for the spectral radius")->capture_default_str();
  app->add_option("--seed", s.seed, "sensitivity directions and initial noise")->capture_default_str();
  app->add_option("--weights", a.weights, "final (the last epoch's, as the paper reports), best (the best val epoch's) or raw (with --ema, the trained weights rather than their average)")->capture_default_str();
  app->add_option("--batch", s.batch, "examples per batch")->capture_default_str();
  app->add_option("--device", a.device, "cpu, cuda or cuda:N")->capture_default_str();
  app->add_option("--dtype", a.dtype, "dtype of the convergence pass (the Jacobian analyses use float64)")
      ->capture_default_str();
  app->add_flag("--json", o->json, "print analysis.json to stdout instead of the summary");

  std::vector<Command> geometry;
  add_geometry_commands(app, geometry);
  app->require_subcommand(0, 1);

  return {app, [o, geometry] {
            for (const Command& c : geometry)
              if (c.app->parsed()) return c.run();
            if (o->dir.empty()) throw Error("analyze: give a run or model folder, or one of: regions, anisotropy, phase");
            AnalyzeRunOptions a = o->analyze;
            if (!o->splits.empty()) a.splits = split_list(o->splits);
            std::string text;
            const AnalysisReport report = analyze_run(o->dir, a, &text);
            if (o->json) std::cout << nlohmann::json(report).dump(2) << "\n";
            else std::cout << text << "wrote " << RunFolder(o->dir).file(RunFolder::kAnalysis) << "\n";
          }};
}

}  // namespace looplab::cli
