// looplab analyze DIR: the fixed-point analysis of a trained model (reachability, input
// dependence, initialization independence, overthinking), written to DIR/analysis.json.
// looplab analyze regions | anisotropy | phase: the paper's geometry of the scalar model.
#include <iostream>

#include "looplab/cli/commands.h"
#include "looplab/run/run_folder.h"
#include "looplab/stages/stages.h"
#include "looplab/util/error.h"

namespace looplab::cli {

Command add_analyze(CLI::App& parent) {
  auto* app = parent.add_subcommand(
      "analyze", "Fixed-point analysis of a trained model (DIR), or the scalar model's geometry (regions, anisotropy, phase)");
  struct Options {
    std::string dir;
    AnalyzeRunOptions analyze;  // analysis/analysis_options.h: the options, their defaults and their table
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  app->add_option("dir", o->dir, "run or model folder");
  static const AnalyzeRunOptions defaults;
  add_option_flags<AnalyzeRunOptions>(
      app, analyze_option_table(), [o](const auto& option, const OptionValue& v) { option.set(o->analyze, v); },
      &defaults);
  app->add_flag("--json", o->json, "print analysis.json to stdout instead of the summary");

  std::vector<Command> geometry;
  add_geometry_commands(app, geometry);
  app->require_subcommand(0, 1);

  return {app, [o, geometry] {
            for (const Command& c : geometry)
              if (c.app->parsed()) return c.run();
            if (o->dir.empty()) throw Error("analyze: give a run or model folder, or one of: regions, anisotropy, phase");
            std::string text;
            const AnalysisReport report = analyze_run(o->dir, o->analyze, &text);
            if (o->json) std::cout << nlohmann::json(report).dump(2) << "\n";
            else std::cout << text << "wrote " << RunFolder(o->dir).file(RunFolder::kAnalysis) << "\n";
          }};
}

}  // namespace looplab::cli
