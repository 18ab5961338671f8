// The reports a run folder holds, as structs: eval.json (accuracy against iterations),
// eval_accelerated.json (early exit / Anderson), analysis.json (the fixed-point analysis) and
// metrics.jsonl (one line per epoch). The command line writes them, the web lab and sweeps read
// them; each has a schema_version, and files written before versions existed (no
// schema_version) still read. No LibTorch here.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace looplab {

// ---- eval.json ---------------------------------------------------------------------------

// Per iteration t (the `iterations` listed), averaged over the split's examples.
struct CurveReport {
  int64_t count = 0, positions = 0;
  std::vector<int64_t> iterations;
  std::vector<double> exact;          // fraction of examples with every position right
  std::vector<double> per_position;   // fraction of positions right
  std::vector<double> relative_step;  // mean over examples of ||x_t - x_{t-1}|| / ||x_{t-1}||
  std::vector<double> unchanged;      // fraction of examples whose answer equals that of t-1
};

struct EvalReport {
  static constexpr int kSchemaVersion = 1;
  int schema_version = kSchemaVersion;
  std::string weights;
  int64_t first = 1, last = 1;  // "iters": [first, last]
  std::map<std::string, CurveReport> splits;
};

// ---- eval_accelerated.json ------------------------------------------------------------------

struct AcceleratedSplitReport {
  int64_t count = 0, positions = 0;
  int64_t block_evaluations = 0, plain_block_evaluations = 0;
  double mean_evaluations = 0;
  int64_t max_evaluations = 0;
  double converged = 0;  // fraction of examples whose relative step fell below the tolerance
  int64_t rejected = 0;  // Anderson: mixed points rejected by the safeguard
  double exact = 0, per_position = 0;
  double seconds = 0;
};

struct AcceleratedReport {
  // 2: the tolerance under "tolerance" (version 1 called it "early_exit", still read).
  static constexpr int kSchemaVersion = 2;
  int schema_version = kSchemaVersion;
  std::string weights;
  int64_t max_iters = 0;
  double tolerance = 0;  // the relative step below which an example stopped (--early-exit)
  int64_t anderson = 0;
  std::map<std::string, AcceleratedSplitReport> splits;
};

// ---- eval_halt.json and eval_scaling.json (eval/halting.h) ---------------------------------

// One halting rule on one split or level.
struct HaltRuleReport {
  std::string rule;        // learned, confidence or fixed-point
  double threshold = 0;    // its threshold
  double exact = 0;        // exact accuracy of the answers where each example stopped
  double mean_iters = 0;   // the iterations they spent, on average
  int64_t most_iters = 0;  // and the most any spent
};
struct HaltSplitReport {
  int64_t count = 0;        // examples
  double exact_at_max = 0;  // exact accuracy with no halting: every example run max_iters
  std::vector<HaltRuleReport> rules;
};
// `looplab eval DIR --halt RULE` (DIR/eval_halt.json).
struct HaltReport {
  static constexpr int kSchemaVersion = 1;
  int schema_version = kSchemaVersion;
  std::string weights;
  int64_t max_iters = 0;
  std::map<std::string, HaltSplitReport> splits;
};
// `looplab eval DIR --scaling` (DIR/eval_scaling.json): the same per difficulty level, easiest
// first (prefix sums: input lengths).
struct ScalingLevelReport {
  std::string label;      // e.g. "64 bits", "rating 1601-2000"
  int64_t size = 0;       // positions per input
  double difficulty = 0;  // in the report's measure (Task::difficulty_levels)
  HaltSplitReport result;
};
// Schema 2 added `measure` and each level's `difficulty`; a schema 1 file (prefix sums only) reads
// as measure "bits", difficulty = size.
struct ScalingReport {
  static constexpr int kSchemaVersion = 2;
  int schema_version = kSchemaVersion;
  std::string weights;
  int64_t max_iters = 0;
  std::string measure = "bits";  // what the levels' difficulty measures
  std::vector<ScalingLevelReport> levels;
};

// ---- eval_trace.json ----------------------------------------------------------------------

// `looplab eval --trace N`: the answer at every iteration for the first N examples of one split,
// the way the web lab draws a maze's path growing. An answer is one character per position, the
// class in base 36 ('0'-'9', then 'a'-'z'); `answers` holds the iterations at which an
// example's answer changed (the first is iteration 1), so the answer after iteration t is the
// last one at or before t.
struct TraceChange {
  int64_t iteration = 0;
  std::string answer;
};
struct TraceExample {
  int64_t index = 0;          // in the split
  std::vector<double> input;  // [positions * channels], the model's input features
  std::string target;         // the true answer, in the answers' characters
  std::vector<TraceChange> answers;
};
struct TraceReport {
  static constexpr int kSchemaVersion = 1;
  int schema_version = kSchemaVersion;
  std::string weights, task, split;
  std::vector<int64_t> grid;  // the positions' grid, e.g. [30, 30] for a size-59 maze
  int64_t channels = 0;       // input features per position
  int64_t max_iters = 0;      // iterations run
  std::vector<TraceExample> examples;
};
// The character of class c (0 <= c < 36) and back; a looplab::Error outside that range.
char trace_char(int64_t c);
int64_t trace_class(char ch);

// ---- analysis.json ------------------------------------------------------------------------

struct Spread {
  double median = 0, max = 0;
};

// One example of the convergence pass; the Jacobian fields only for the first `detail` ones.
struct ExampleReport {
  int64_t index = 0;
  std::string behaviour;  // settle, cycle, diverge, wander
  int64_t first_below = -1;
  double final_step = 0;
  std::optional<int64_t> period;  // cycles only
  // Since 2026-12-07 (absent from older files): whether the answer after max_iters is exactly
  // right, and the first iteration from which the answer no longer changed up to max_iters.
  std::optional<bool> right;
  std::optional<int64_t> answer_from;
  struct Detail {
    double radius = 0, eigenvalue_real = 0, eigenvalue_imag = 0, radius_residual = 0;
    int64_t arnoldi_steps = 0;
    bool radius_converged = false;
    double sensitivity_norm = 0, sensitivity_fd_norm = 0, sensitivity_fd_difference = 0;
    double gmres_residual = 0;
    int64_t gmres_steps = 0;
    double x0_vs_zero = 0, x0_vs_noise = 0, zero_vs_noise = 0;
  };
  std::optional<Detail> detail;
};

struct AnalysisSplitReport {
  int64_t count = 0, positions = 0, max_iters = 0;
  double tolerance = 0;
  struct Convergence {
    double settle = 0, cycle = 0, diverge = 0, wander = 0;
    Spread first_below, final_step;
  } convergence;
  struct Accuracy {
    std::vector<int64_t> iterations;
    std::vector<double> exact, per_position;
  } accuracy;
  // The examples exactly right after max_iters, by the behaviour of their state (Knutson et al.
  // 2024: right answers on limit cycles); absent from files before 2026-12-07.
  struct Right {
    int64_t settle = 0, cycle = 0, diverge = 0, wander = 0;
  };
  std::optional<Right> right;
  struct Overthinking {
    int64_t training_iters = 0;
    double exact_at_training_iters = 0, best_exact = 0;
    int64_t best_iteration = 0;
    double exact_at_max_iters = 0;
  } overthinking;
  struct Detail {
    int64_t count = 0;
    // The rest only when count > 0.
    double radius_median = 0, radius_max = 0, fraction_below_1 = 0, fraction_converged = 0;
    Spread sensitivity_norm, sensitivity_fd_norm, implicit_vs_fd, implicit_vs_fd_where_radius_below_1;
    Spread x0_vs_zero, x0_vs_noise, zero_vs_noise;
  } detail;
  std::vector<ExampleReport> examples;
};

struct AnalysisReport {
  static constexpr int kSchemaVersion = 1;
  int schema_version = kSchemaVersion;
  std::string weights;
  std::vector<double> recall_spectral_radius;  // rho(Wx) per block; empty without recall
  std::map<std::string, AnalysisSplitReport> splits;
  // Mazes: the hard split's maze size where `analyze --hard-size` chose it; absent: the run's.
  std::optional<int64_t> hard_size;
};

// ---- metrics.jsonl ------------------------------------------------------------------------

// One line per epoch. Version 2: "train_exact" and "val_exact", the exact accuracy (the
// fraction of examples whose whole answer is right) as every other file names it; version 1
// called them "train_accuracy" and "val_accuracy".
struct EpochMetrics {
  static constexpr int kSchemaVersion = 2;
  int schema_version = kSchemaVersion;
  int64_t epoch = 0;
  double lr = 0, loss = 0, train_exact = 0, val_exact = 0;
  // Absent in files written before it was recorded (such a line is written back without it).
  std::optional<double> val_per_position;
  int64_t val_iters = 0;  // the iterations the val figures were measured at (T)
  double seconds = 0, peak_rss_mib = 0;
  // --gradient phantom and implicit: the fraction of this epoch's batches whose forward solve
  // (and, implicit, adjoint solve) reached the tolerance within T iterations; absent otherwise.
  std::optional<double> forward_converged, adjoint_converged;
  // --jacobian-weight: the epoch's mean estimate of ||df/dx||_F^2 / (L d) (before the weight).
  std::optional<double> jacobian;
  // With a halting head: its mean binary cross-entropy, and the fraction of examples whose
  // logit's sign (> 0: right) matched whether the answer was exactly right.
  std::optional<double> halt_loss, halt_accuracy;
};

// to_json / from_json of each (nlohmann's conventions, so `json j = report;` and
// `j.get<EvalReport>()` work). from_json throws nlohmann::json::exception on a missing or
// ill-typed key (its what() names the key path, e.g. "key 'splits/val/count': missing");
// read_report below turns that into a looplab::Error naming the file. from_json records the
// file's schema_version; to_json always writes kSchemaVersion (the keys it writes are the
// current version's). A double written as NaN or infinity becomes null, which reads as NaN.
void to_json(nlohmann::json& j, const CurveReport& r);
void from_json(const nlohmann::json& j, CurveReport& r);
void to_json(nlohmann::json& j, const EvalReport& r);
void from_json(const nlohmann::json& j, EvalReport& r);
void to_json(nlohmann::json& j, const AcceleratedSplitReport& r);
void from_json(const nlohmann::json& j, AcceleratedSplitReport& r);
void to_json(nlohmann::json& j, const AcceleratedReport& r);
void from_json(const nlohmann::json& j, AcceleratedReport& r);
void to_json(nlohmann::json& j, const HaltRuleReport& r);
void from_json(const nlohmann::json& j, HaltRuleReport& r);
void to_json(nlohmann::json& j, const HaltSplitReport& r);
void from_json(const nlohmann::json& j, HaltSplitReport& r);
void to_json(nlohmann::json& j, const HaltReport& r);
void from_json(const nlohmann::json& j, HaltReport& r);
void to_json(nlohmann::json& j, const ScalingLevelReport& r);
void from_json(const nlohmann::json& j, ScalingLevelReport& r);
void to_json(nlohmann::json& j, const ScalingReport& r);
void from_json(const nlohmann::json& j, ScalingReport& r);
void to_json(nlohmann::json& j, const TraceChange& r);
void from_json(const nlohmann::json& j, TraceChange& r);
void to_json(nlohmann::json& j, const TraceExample& r);
void from_json(const nlohmann::json& j, TraceExample& r);
void to_json(nlohmann::json& j, const TraceReport& r);
void from_json(const nlohmann::json& j, TraceReport& r);
void to_json(nlohmann::json& j, const ExampleReport& r);
void from_json(const nlohmann::json& j, ExampleReport& r);
void to_json(nlohmann::json& j, const AnalysisSplitReport& r);
void from_json(const nlohmann::json& j, AnalysisSplitReport& r);
void to_json(nlohmann::json& j, const AnalysisReport& r);
void from_json(const nlohmann::json& j, AnalysisReport& r);
void to_json(nlohmann::json& j, const EpochMetrics& r);
void from_json(const nlohmann::json& j, EpochMetrics& r);

// Reads a report file; a missing, truncated or malformed file, or a schema_version newer than
// this build knows, is a looplab::Error naming the file (and the key).
template <typename Report>
Report read_report(const std::string& path);
// Writes it atomically (temporary file, then rename), compact JSON and a newline.
template <typename Report>
void write_report(const std::string& path, const Report& report);

// The reports as tables for a terminal, splits in the given order (`looplab eval`).
std::string to_text(const EvalReport& r, const std::vector<std::string>& order);
std::string to_text(const AcceleratedReport& r, const std::vector<std::string>& order);
std::string to_text(const HaltReport& r, const std::vector<std::string>& order);
std::string to_text(const ScalingReport& r);

// metrics.jsonl: every complete line (a torn last line from a kill is dropped).
std::vector<EpochMetrics> read_metrics(const std::string& path);
void write_metrics(const std::string& path, const std::vector<EpochMetrics>& lines);

}  // namespace looplab
