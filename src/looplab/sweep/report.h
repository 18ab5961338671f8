// `looplab sweep report`: a sweep's run folders gathered into the paper's tables. Runs that
// differ only in their seeds form a group; a group's cell is the mean exact accuracy over its
// runs with the standard error of that mean, beside the paper's value for the same task, norm,
// recall and learning rate (tables 4-6, ../shared/paper/tables.json, shipped as
// sweeps/paper_tables.json). No LibTorch.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "looplab/sweep/sweep_file.h"

namespace looplab::sweep {

// A sweep's report, in the sweep's folder beside its runs' folders.
inline constexpr const char* kReportFile = "report.json";
inline constexpr int kReportSchemaVersion = 1;  // of report.json

struct Stat {
  int64_t n = 0;
  double mean = 0, standard_error = 0;  // of the mean: sample sd / sqrt(n), 0 for n = 1
};
Stat stat_of(const std::vector<double>& values);

struct Group {
  std::string task, norm, recall, preset;
  double lr = 0;
  std::string key;              // every setting but the seeds, e.g. "recall-none_norm-post_lr-0.001"
  std::vector<std::string> runs;  // run names; only done runs are counted
  int64_t runs_planned = 0;
  Stat val, hard, rho;          // exact accuracy in percent at the last evaluated iteration; rho(Wx) of block 0
  std::optional<double> paper_val, paper_hard;  // the paper's, where it has the configuration
  // The fixed points, from analysis.json's val split (else its first), for runs that have one:
  // the percent of examples that settle; and over the detailed examples, the median spectral
  // radius of df/dx at the fixed point, the percent with radius below 1, and the median norm of
  // the input sensitivity dx*/dx0 (GMRES).
  Stat settle, radius, radius_below_1, sensitivity;
  // The split those come from, and the percent of its examples whose iteration cycles or
  // wanders; over the runs whose analysis.json counts right answers (since 2026-12-07), the
  // examples exactly right after the last iteration, and how many of them sit on a cycle.
  std::string analysis_split;
  Stat cycle, wander;
  std::optional<int64_t> right, right_on_cycle;
  // Test-time compute against difficulty, from eval_scaling.json, for runs that have one: per
  // halting rule ("none" first: every example run to the end), per level (`scaling_levels`, the
  // labels in the first such run's order), the mean iterations spent and the exact accuracy in
  // percent at the stop.
  struct ScalingRow {
    std::string rule;
    std::vector<Stat> iters, exact;
  };
  std::vector<std::string> scaling_levels;
  std::vector<ScalingRow> scaling;
};

// Figure 3: the best autonomous (recall none) group of each task by mean hard accuracy, its mean
// exact accuracy (percent) at iterations 1..eval_iters on val and hard; training_iters (T) is
// the depth the figure shades.
struct Figure3Curve {
  std::string task, group;
  int64_t training_iters = 0;
  std::vector<double> val, hard;
};

// Figure 6: rho(Wx) against the learning rate, external and internal recall without outer
// normalization (pre and peri norm). series: the group without its learning rate (one line of
// the figure; recall-external_norm-pre, or with a sweep's other axes
// recall-external_norm-pre_gradient-implicit).
struct Figure6Point {
  std::string task, series, recall, norm;
  double lr = 0;
  Stat rho;
};

struct Report {
  std::string sweep, file;
  int64_t eval_iters = 0;
  // Done runs whose eval.json is of other weights than the final ones (best.safetensors, as
  // sweeps evaluated before 2026-12-03): left out of the tables, named below them.
  std::vector<std::string> not_final;
  std::vector<Group> groups;
  std::vector<Figure3Curve> figure3;
  std::vector<Figure6Point> figure6;
};

// The paper's values (exact accuracy in percent, as printed) for a task, norm, recall and learning
// rate, from its tables as sweeps/paper_tables.json holds them (`tables`: that file read; null
// gives none): the task's val and hard tables (TaskSpec::paper_val_table, paper_hard_table).
// A learning rate matches a table's "3e-4" within a relative 1e-9. Each is nullopt where the
// tables have no such cell. The sweeps page and the runs page of the web lab both show them.
struct PaperValues {
  std::optional<double> val, hard;
  std::string val_table, hard_table;  // the tables they come from
};
PaperValues paper_values(const nlohmann::json& tables, const std::string& task, const std::string& norm,
                         const std::string& recall, double lr);

// Reads every done run's eval.json and analysis.json. The tables are of the final weights (the
// last epoch's, model.safetensors), as the paper's are. `paper_tables`: tables.json's path ("" or
// a missing file: no paper columns).
Report make_report(const Sweep& sw, const std::string& paper_tables);

std::string to_markdown(const Report& r);
std::string to_csv(const Report& r);
nlohmann::json to_json(const Report& r);

// A report.json read back (the web lab's sweeps page): its schema version at most this
// looplab's and its groups a list, else a looplab::Error naming the file (as `shown_as`, default
// the path) and key.
nlohmann::json read_report_json(const std::string& path, const std::string& shown_as = "");

// `looplab sweep report`: make_report, written (atomically) to OUT/report.md, report.csv and
// report.json (kReportFile). Returns the Markdown.
std::string write_report(const Sweep& sw, const std::string& paper_tables);

}  // namespace looplab::sweep
