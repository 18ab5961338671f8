#include "looplab/run/reports.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include "looplab/io/atomic_file.h"
#include "looplab/run/run_folder.h"
#include "looplab/run/run_spec.h"
#include "looplab/util/error.h"

namespace looplab {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// A fresh folder per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = (fs::temp_directory_path() /
             ("looplab_reports_" + std::to_string(::getpid()) + "_" + info->name()))
                .string();
    fs::remove_all(path_);
    make_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The message of the looplab::Error that `f` throws ("" if none).
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

EvalReport sample_eval() {
  EvalReport r;
  r.weights = "best.safetensors";
  r.first = 2, r.last = 4;
  CurveReport c;
  c.count = 100, c.positions = 32;
  c.iterations = {2, 3, 4};
  c.exact = {0.0, 0.5, 1.0};
  c.per_position = {0.25, 0.75, 1.0};
  c.relative_step = {1.5, 0.01, 1e-7};
  c.unchanged = {0.0, 0.9, 1.0};
  r.splits["val"] = c;
  c.count = 7;
  r.splits["hard"] = c;
  return r;
}

AcceleratedReport sample_accelerated() {
  AcceleratedReport r;
  r.weights = "model.safetensors";
  r.max_iters = 500;
  r.tolerance = 1e-4;
  r.anderson = 5;
  AcceleratedSplitReport s;
  s.count = 10, s.positions = 81, s.block_evaluations = 1234, s.plain_block_evaluations = 5000;
  s.mean_evaluations = 123.4, s.max_evaluations = 500, s.converged = 0.9, s.rejected = 3;
  s.exact = 0.5, s.per_position = 0.75, s.seconds = 12.5;
  r.splits["hard"] = s;
  return r;
}

AnalysisReport sample_analysis() {
  AnalysisReport r;
  r.weights = "best.safetensors";
  r.recall_spectral_radius = {0.5, 1.25};
  AnalysisSplitReport s;
  s.count = 3, s.positions = 32, s.max_iters = 4, s.tolerance = 1e-3;
  s.convergence = {0.5, 0.25, 0.0, 0.25, {3.0, 4.0}, {1e-4, 0.5}};
  s.accuracy.iterations = {1, 2, 3, 4};
  s.accuracy.exact = {0.0, 0.25, 0.5, 0.5};
  s.accuracy.per_position = {0.5, 0.75, 0.875, 0.875};
  s.overthinking = {3, 0.5, 0.5, 3, 0.5};
  s.detail.count = 1;
  s.detail.radius_median = 0.9, s.detail.radius_max = 0.95, s.detail.fraction_below_1 = 1.0;
  s.detail.fraction_converged = 1.0;
  s.detail.sensitivity_norm = {1.5, 2.5};
  s.detail.sensitivity_fd_norm = {1.5, 2.5};
  s.detail.implicit_vs_fd = {1e-6, 2e-6};
  s.detail.implicit_vs_fd_where_radius_below_1 = {1e-6, 2e-6};
  s.detail.x0_vs_zero = {1e-5, 1e-4};
  s.detail.x0_vs_noise = {2e-5, 2e-4};
  s.detail.zero_vs_noise = {3e-5, 3e-4};
  ExampleReport e;
  e.index = 0, e.behaviour = "settle", e.first_below = 3, e.final_step = 1e-5;
  e.detail = ExampleReport::Detail{0.9, 0.9, -0.1, 1e-9, 12, true, 1.5, 1.5, 1e-6, 1e-10, 7, 1e-5, 2e-5, 3e-5};
  s.examples.push_back(e);
  e = ExampleReport{};
  e.index = 1, e.behaviour = "cycle", e.first_below = -1, e.final_step = 0.5, e.period = 2;
  s.examples.push_back(e);
  e = ExampleReport{};
  e.index = 2, e.behaviour = "wander", e.first_below = -1, e.final_step = 0.25;
  s.examples.push_back(e);
  r.splits["val"] = s;
  AnalysisSplitReport empty = s;
  empty.detail = AnalysisSplitReport::Detail{};  // count 0: only {"count"}
  empty.examples.resize(2);
  empty.examples[0].detail.reset();
  r.splits["hard"] = empty;
  return r;
}

EpochMetrics sample_metrics(int64_t epoch) {
  EpochMetrics m;
  m.epoch = epoch, m.lr = 1e-3, m.loss = 0.5, m.train_exact = 0.25, m.val_exact = 0.125;
  m.val_per_position = 0.75, m.val_iters = 30, m.seconds = 1.5, m.peak_rss_mib = 300.25;
  return m;
}

// to_json, then from_json: equal JSON (so every member survives) and an equal dump (so every
// integer stays an integer and every double a double).
template <typename Report>
void expect_round_trip(const Report& r) {
  const json j = r;
  const Report back = j.get<Report>();
  const json again = back;
  EXPECT_EQ(again, j);
  EXPECT_EQ(again.dump(), j.dump());
  EXPECT_EQ(back.schema_version, Report::kSchemaVersion);
  EXPECT_EQ(j.at("schema_version"), Report::kSchemaVersion);
  EXPECT_TRUE(j.at("schema_version").is_number_integer());
}

TEST(Reports, EvalRoundTrip) {
  const EvalReport r = sample_eval();
  expect_round_trip(r);
  const json j = r;
  EXPECT_EQ(j.at("iters"), json({2, 4}));
  EXPECT_TRUE(j["splits"]["val"]["count"].is_number_integer());
  EXPECT_TRUE(j["splits"]["val"]["exact"][0].is_number_float());
  const EvalReport back = j.get<EvalReport>();
  EXPECT_EQ(back.first, 2);
  EXPECT_EQ(back.last, 4);
  EXPECT_EQ(back.splits.at("hard").count, 7);
  EXPECT_EQ(back.splits.at("val").relative_step, r.splits.at("val").relative_step);
}

TEST(Reports, AcceleratedRoundTrip) {
  const AcceleratedReport r = sample_accelerated();
  expect_round_trip(r);
  const json j = r;
  EXPECT_TRUE(j["tolerance"].is_number_float());
  EXPECT_FALSE(j.contains("early_exit"));
  EXPECT_TRUE(j["anderson"].is_number_integer());
  EXPECT_TRUE(j["splits"]["hard"]["mean_evaluations"].is_number_float());
  EXPECT_TRUE(j["splits"]["hard"]["max_evaluations"].is_number_integer());
  EXPECT_EQ(j.get<AcceleratedReport>().splits.at("hard").rejected, 3);
}

// A version-1 eval_accelerated.json named the tolerance "early_exit": it is read, and written
// back under "tolerance" with version 2.
TEST(Reports, AcceleratedVersionOneReadsEarlyExit) {
  json j = sample_accelerated();
  j["schema_version"] = 1;
  j["early_exit"] = j["tolerance"];
  j.erase("tolerance");
  const AcceleratedReport r = j.get<AcceleratedReport>();
  EXPECT_EQ(r.schema_version, 1);
  EXPECT_EQ(r.tolerance, 1e-4);
  const json back = r;
  EXPECT_EQ(back["schema_version"], 2);
  EXPECT_EQ(back["tolerance"], 1e-4);
  j.erase("schema_version");  // a file from before versions: version 1 too
  EXPECT_EQ(j.get<AcceleratedReport>().tolerance, 1e-4);
  j["schema_version"] = 2;  // version 2 must have "tolerance"
  EXPECT_THROW(j.get<AcceleratedReport>(), json::exception);
}

TEST(Reports, AnalysisRoundTrip) {
  const AnalysisReport r = sample_analysis();
  expect_round_trip(r);
  const json j = r;
  EXPECT_EQ(j["splits"]["hard"]["detail"], json({{"count", 0}}));
  const json& e = j["splits"]["val"]["examples"];
  EXPECT_EQ(e[0]["eigenvalue"], json({0.9, -0.1}));
  EXPECT_TRUE(e[0]["radius_converged"].is_boolean());
  EXPECT_FALSE(e[0].contains("period"));
  EXPECT_EQ(e[1]["period"], 2);
  EXPECT_FALSE(e[1].contains("radius"));
  EXPECT_EQ(e[2].size(), 4u);
  const AnalysisReport back = j.get<AnalysisReport>();
  EXPECT_TRUE(back.splits.at("val").examples[0].detail.has_value());
  EXPECT_EQ(back.splits.at("val").examples[0].detail->gmres_steps, 7);
  EXPECT_EQ(back.splits.at("val").examples[1].period, std::optional<int64_t>(2));
  EXPECT_FALSE(back.splits.at("val").examples[2].period.has_value());
  // Right answers by behaviour (2026-12-07): written where set, absent from older files.
  AnalysisReport right = sample_analysis();
  right.splits.at("val").right = AnalysisSplitReport::Right{1, 2, 0, 3};
  right.splits.at("val").examples[1].right = true;
  right.splits.at("val").examples[1].answer_from = 17;
  expect_round_trip(right);
  const json jr = right;
  EXPECT_EQ(jr["splits"]["val"]["right"], json({{"settle", 1}, {"cycle", 2}, {"diverge", 0}, {"wander", 3}}));
  EXPECT_EQ(jr["splits"]["val"]["examples"][1]["answer_from"], 17);
  EXPECT_FALSE(j["splits"]["val"].contains("right"));
  EXPECT_FALSE(back.splits.at("val").right.has_value());
}

TEST(Reports, TraceRoundTripsAndChecksItsAnswers) {
  TraceReport r;
  r.weights = "model.safetensors", r.task = "mazes", r.split = "hard", r.grid = {2, 2}, r.channels = 2, r.max_iters = 9;
  r.examples.push_back({3, {0, 1, 1, 0, 0, 0, 1, 1}, "0110", {{1, "0000"}, {4, "0100"}, {7, "0110"}}});
  expect_round_trip(r);
  const json good = r;
  EXPECT_EQ(good["examples"][0]["answers"][1]["answer"], "0100");
  EXPECT_EQ(trace_char(35), 'z');
  EXPECT_EQ(trace_class('a'), 10);
  EXPECT_THROW(trace_char(36), Error);
  // Each bad file names its key.
  auto refused = [&](const std::function<void(json&)>& plant, const std::string& key) {
    json j = good;
    plant(j);
    try {
      j.get<TraceReport>();
      ADD_FAILURE() << "accepted a trace with a bad " << key;
    } catch (const json::exception& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  };
  refused([](json& j) { j["examples"][0]["target"] = "011"; }, "examples/0/target");
  refused([](json& j) { j["examples"][0]["answers"][1]["answer"] = "01A0"; }, "examples/0/answers/1/answer");
  refused([](json& j) { j["examples"][0]["answers"][2]["iteration"] = 4; }, "examples/0/answers/2/iteration");
  refused([](json& j) { j["examples"][0]["answers"][2]["iteration"] = 10; }, "examples/0/answers/2/iteration");
  refused([](json& j) { j["examples"][0]["answers"][0]["iteration"] = 2; }, "examples/0/answers");
  refused([](json& j) { j["examples"][0]["input"].erase(0); }, "examples/0/input");
  refused([](json& j) { j["grid"] = json::array({2, 0}); }, "grid");
}

TEST(Reports, MetricsRoundTrip) {
  expect_round_trip(sample_metrics(3));
  EpochMetrics old = sample_metrics(4);
  old.val_per_position.reset();  // lines from before val_per_position was recorded
  expect_round_trip(old);
  EXPECT_FALSE(json(old).contains("val_per_position"));
  // The training methods' figures (docs/training-methods.md), present only where recorded.
  EpochMetrics methods = sample_metrics(5);
  methods.forward_converged = 0.5, methods.adjoint_converged = 0.25, methods.jacobian = 0.125;
  methods.halt_loss = 0.375, methods.halt_accuracy = 0.875;
  expect_round_trip(methods);
  EXPECT_EQ(json(methods)["jacobian"], 0.125);
  EXPECT_FALSE(json(old).contains("jacobian"));
}

TEST(Reports, HaltAndScalingRoundTrip) {
  HaltSplitReport s;
  s.count = 7, s.exact_at_max = 0.5;
  s.rules = {{"confidence", 0.9, 0.25, 3.5, 9}, {"fixed-point", 1e-4, 0.75, 12.25, 30}};
  HaltReport h;
  h.weights = "model.safetensors", h.max_iters = 30, h.splits["val"] = s;
  ScalingReport sc;
  sc.weights = "best.safetensors", sc.max_iters = 40, sc.levels = {{"32 bits", 32, 32, s}, {"64 bits", 64, 64, s}};
  TempDir dir;
  write_report(dir.file("eval_halt.json"), h);
  write_report(dir.file("eval_scaling.json"), sc);
  EXPECT_EQ(json(read_report<HaltReport>(dir.file("eval_halt.json"))), json(h));
  EXPECT_EQ(json(read_report<ScalingReport>(dir.file("eval_scaling.json"))), json(sc));
  EXPECT_EQ(json(h)["splits"]["val"]["rules"][1]["mean_iters"], 12.25);
  // A missing key is named with its path.
  json bad = sc;
  bad["levels"][1]["result"]["rules"][0].erase("exact");
  write_file_atomic(dir.file("bad.json"), bad.dump());
  try {
    read_report<ScalingReport>(dir.file("bad.json"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("levels/1/result/rules/0/exact"), std::string::npos) << e.what();
  }
  // The tables: a row per rule under each split or level.
  EXPECT_NE(to_text(h, {"val"}).find("fixed-point"), std::string::npos);
  EXPECT_NE(to_text(sc).find("64 bits"), std::string::npos);
  EXPECT_EQ(to_text(sc).find("median"), std::string::npos);  // bits need no median
  // Schema 1 (before the rated tasks had levels): no measure, no difficulty -> bits, the size.
  json v1 = sc;
  v1["schema_version"] = 1;
  v1.erase("measure");
  for (auto& l : v1["levels"]) l.erase("difficulty");
  v1["levels"][1]["size"] = 128;
  write_file_atomic(dir.file("v1.json"), v1.dump());
  const ScalingReport old = read_report<ScalingReport>(dir.file("v1.json"));
  EXPECT_EQ(old.measure, "bits");
  EXPECT_EQ(old.levels[1].difficulty, 128);
  // Levels by a rating show each one's median beside the band, the column as wide as the longest.
  ScalingReport rated = sc;
  rated.measure = "puzzle rating";
  rated.levels = {{"rating 0-1000", 64, 900, s}, {"rating 2401 or more", 64, 2450.5, s}};
  const std::string text = to_text(rated);
  EXPECT_EQ(text.rfind("levels by puzzle rating\n", 0), 0u) << text;
  EXPECT_NE(text.find("rating 2401 or more (median 2450.5)        7  none"), std::string::npos) << text;
  EXPECT_NE(text.find("rating 0-1000 (median 900)                 7  none"), std::string::npos) << text;
}

TEST(Reports, NonFiniteDoublesReadBackAsNaN) {
  AcceleratedReport r = sample_accelerated();
  r.splits["hard"].mean_evaluations = std::nan("");
  const json j = json::parse(json(r).dump());
  EXPECT_TRUE(j["splits"]["hard"]["mean_evaluations"].is_null());
  EXPECT_TRUE(std::isnan(j.get<AcceleratedReport>().splits.at("hard").mean_evaluations));
}

TEST(Reports, FilesRoundTrip) {
  TempDir dir;
  write_report(dir.file("eval.json"), sample_eval());
  write_report(dir.file("eval_accelerated.json"), sample_accelerated());
  write_report(dir.file("analysis.json"), sample_analysis());
  const std::string text = read_file(dir.file("eval.json"));
  EXPECT_EQ(text, json(sample_eval()).dump() + "\n");
  EXPECT_EQ(json(read_report<EvalReport>(dir.file("eval.json"))), json(sample_eval()));
  EXPECT_EQ(json(read_report<AcceleratedReport>(dir.file("eval_accelerated.json"))), json(sample_accelerated()));
  EXPECT_EQ(json(read_report<AnalysisReport>(dir.file("analysis.json"))), json(sample_analysis()));
  const std::vector<EpochMetrics> lines = {sample_metrics(0), sample_metrics(1)};
  write_metrics(dir.file("metrics.jsonl"), lines);
  const std::vector<EpochMetrics> back = read_metrics(dir.file("metrics.jsonl"));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(json(back[1]), json(lines[1]));
}

TEST(Reports, LegacyFileWithoutSchemaVersionReads) {
  TempDir dir;
  json j = sample_eval();
  j.erase("schema_version");
  write_file_atomic(dir.file("eval.json"), j.dump());
  const EvalReport r = read_report<EvalReport>(dir.file("eval.json"));
  EXPECT_EQ(r.schema_version, 1);
  EXPECT_EQ(json(r), json(sample_eval()));
}

TEST(Reports, NewerSchemaVersionIsRefused) {
  TempDir dir;
  json j = sample_analysis();
  j["schema_version"] = AnalysisReport::kSchemaVersion + 1;
  const std::string path = dir.file("analysis.json");
  write_file_atomic(path, j.dump());
  EXPECT_EQ(error_of([&] { read_report<AnalysisReport>(path); }),
            path + ": schema_version " + std::to_string(AnalysisReport::kSchemaVersion + 1) +
                " is newer than this looplab reads (" + std::to_string(AnalysisReport::kSchemaVersion) + ")");
}

TEST(Reports, MissingTruncatedAndMalformedFilesNameTheFile) {
  TempDir dir;
  const std::string path = dir.file("eval.json");
  EXPECT_EQ(error_of([&] { read_report<EvalReport>(path); }), path + ": no such file");

  const std::string text = json(sample_eval()).dump();
  write_file_atomic(path, text.substr(0, text.size() / 2));
  const std::string truncated = error_of([&] { read_report<EvalReport>(path); });
  EXPECT_EQ(truncated.rfind(path + ": not valid JSON (", 0), 0u) << truncated;

  json j = sample_eval();
  j["splits"]["val"].erase("count");
  write_file_atomic(path, j.dump());
  EXPECT_EQ(error_of([&] { read_report<EvalReport>(path); }), path + ": key 'splits/val/count': missing");

  j = sample_eval();
  j["splits"]["val"]["count"] = 1.5;
  write_file_atomic(path, j.dump());
  EXPECT_EQ(error_of([&] { read_report<EvalReport>(path); }),
            path + ": key 'splits/val/count': expected an integer, got 1.5");

  j = sample_eval();
  j["splits"]["val"]["exact"][1] = "x";
  write_file_atomic(path, j.dump());
  EXPECT_EQ(error_of([&] { read_report<EvalReport>(path); }),
            path + ": key 'splits/val/exact/1': expected a number, got \"x\"");

  write_file_atomic(path, "[1, 2]");
  EXPECT_TRUE(contains(error_of([&] { read_report<EvalReport>(path); }), path + ": expected a JSON object"));

  const std::string analysis = dir.file("analysis.json");
  json a = sample_analysis();
  a["splits"]["val"]["examples"][0].erase("gmres_steps");
  write_file_atomic(analysis, a.dump());
  EXPECT_EQ(error_of([&] { read_report<AnalysisReport>(analysis); }),
            analysis + ": key 'splits/val/examples/0/gmres_steps': missing");
}

TEST(Reports, MetricsDropATornLastLineAndNameABadMiddleLine) {
  TempDir dir;
  const std::string path = dir.file("metrics.jsonl");
  const std::string l0 = json(sample_metrics(0)).dump(), l1 = json(sample_metrics(1)).dump();
  write_file_atomic(path, l0 + "\n" + l1 + "\n" + l1.substr(0, 20));
  std::vector<EpochMetrics> m = read_metrics(path);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[1].epoch, 1);

  write_file_atomic(path, l0 + "\n" + l1.substr(0, 20) + "\n" + l1 + "\n");
  const std::string bad = error_of([&] { read_metrics(path); });
  EXPECT_EQ(bad.rfind(path + ":2: not valid JSON (", 0), 0u) << bad;

  json k = sample_metrics(2);
  k.erase("loss");
  write_file_atomic(path, l0 + "\n" + l1 + "\n" + k.dump() + "\n");
  EXPECT_EQ(error_of([&] { read_metrics(path); }), path + ":3: key 'loss': missing");

  TempDir empty;
  EXPECT_TRUE(RunFolder(empty.path()).metrics().empty());
}

TEST(RunDirTest, WeightsNamesTheOption) {
  TempDir dir;
  RunFolder run(dir.path());
  try {
    run.weights("first");
    FAIL() << "no OptionError";
  } catch (const OptionError& e) {
    EXPECT_EQ(e.option(), "weights");
    EXPECT_EQ(std::string(e.what()), "weights 'first': expected final, best or raw");
  }
  // raw: only where --ema kept the trained weights apart.
  EXPECT_THROW(run.weights("raw"), Error);
  write_file_atomic(run.file(RunFolder::kRaw), "x");
  EXPECT_EQ(run.weights("raw"), RunFolder::kRaw);
  write_file_atomic(run.file(RunFolder::kWeights), "x");
  EXPECT_EQ(run.weights("best"), RunFolder::kWeights);  // no best.safetensors: the final weights
  write_file_atomic(run.file(RunFolder::kBest), "x");
  EXPECT_EQ(run.weights("best"), RunFolder::kBest);
  EXPECT_EQ(run.weights("final"), RunFolder::kWeights);
  EXPECT_EQ(run.weights("latest"), RunFolder::kWeights);  // the earlier name
  // A folder shipped with its best epoch's weights alone has no final ones: said, not swapped.
  std::filesystem::remove(run.file(RunFolder::kWeights));
  EXPECT_EQ(error_of([&] { run.weights("final"); }),
            dir.path() + ": no final weights (model.safetensors), only the best epoch's (best.safetensors): pass --weights best");
}

TEST(RunSpecTest, CheckNamesTheOption) {
  ModelConfig model;
  model.task = "prefix-sums";
  model.width = 64, model.heads = 4;
  RunSpec s;
  s.model = model;
  s.train.alpha = 2;
  try {
    check(s);
    FAIL() << "no OptionError";
  } catch (const OptionError& e) {
    EXPECT_EQ(e.option(), "alpha");
    EXPECT_EQ("--" + e.option() + e.rest(), "--alpha must lie in [0, 1]");
    EXPECT_EQ(std::string(e.what()), "alpha must lie in [0, 1]");
  }
  s.train.alpha = 1;
  s.train.lr = -1;
  try {
    check(s);
    FAIL() << "no OptionError";
  } catch (const OptionError& e) {
    EXPECT_EQ(e.option(), "lr");
    EXPECT_EQ(std::string(e.what()), "lr must be positive");
  }
  s.train.lr = 1e-3;
  s.train.training_iters = 0;
  try {
    check(s);
    FAIL() << "no OptionError";
  } catch (const OptionError& e) {
    EXPECT_EQ(e.option(), "training_iters");
  }
  s.train.training_iters = 30;
  s.train.dtype = "int8";
  try {
    check(s);
    FAIL() << "no OptionError";
  } catch (const OptionError& e) {
    EXPECT_EQ(std::string(e.what()),
              "dtype 'int8': expected float32, float64, bfloat16 or float16");
  }
  s.train.dtype = "bfloat16";
  EXPECT_NO_THROW(check(s));
}

TEST(RunSpecTest, TrainOptionsRoundTrip) {
  TrainOptions o;
  o.preset = "paper", o.lr = 2e-4, o.epochs = 7, o.seed = 9, o.recompute = true, o.dtype = "float64";
  o.precision = "bf16-mixed", o.jacobian_weight = 0.25, o.ema = 0.99;
  const json j = to_json(o);
  EXPECT_EQ(j.size(), 21u);
  // Files from before --jacobian-weight and --ema: both off.
  json before = j;
  before.erase("jacobian_weight"), before.erase("ema");
  EXPECT_EQ(train_options_from_json(before, "t.json").jacobian_weight, 0);
  EXPECT_EQ(train_options_from_json(before, "t.json").ema, 0);
  // A schema-1 file has no precision: those runs trained in float32.
  json older = j;
  older.erase("precision");
  EXPECT_EQ(train_options_from_json(older, "t.json").precision, "float32");
  EXPECT_EQ(to_json(train_options_from_json(j, "t.json")), j);
  json bad = j;
  bad.erase("clip");
  EXPECT_EQ(error_of([&] { train_options_from_json(bad, "t.json"); }), "t.json: key 'train/clip': missing");
  // Version 2 of training.json called T max_iters.
  json version2 = j;
  version2["max_iters"] = 12;
  version2.erase("training_iters");
  EXPECT_EQ(train_options_from_json(version2, "t.json").training_iters, 12);
}

TEST(RunSpecTest, PresetsTakeTheTasksNumbers) {
  const RunSpec cpu = preset_spec("cpu", "prefix-sums", Recall::kExternal, Norm::kPost);
  EXPECT_EQ(cpu.model.task, "prefix-sums");
  EXPECT_EQ(cpu.model.width, 64);
  EXPECT_EQ(cpu.model.heads, 4);
  EXPECT_EQ(cpu.train.preset, "cpu");
  EXPECT_EQ(cpu.train.epochs, 60);
  EXPECT_EQ(cpu.train.cooldown_epoch, 50);
  EXPECT_EQ(cpu.train.batch, 500);
  EXPECT_EQ(cpu.data.task, "prefix-sums");
  EXPECT_EQ(cpu.data.train_count, 8000);  // the preset's 0: default_data()'s count
  EXPECT_EQ(cpu.data.hard_count, 10000);
  EXPECT_NO_THROW(check(cpu));

  const RunSpec sudoku = preset_spec("cpu", "sudoku", Recall::kExternal, Norm::kPost);
  EXPECT_EQ(sudoku.model.width, 128);
  EXPECT_EQ(sudoku.model.heads, 4);
  EXPECT_EQ(sudoku.data.train_count, 4000);
  EXPECT_EQ(sudoku.data.val_count, 1000);
  EXPECT_EQ(sudoku.data.hard_count, 1000);
  EXPECT_EQ(sudoku.train.batch, 100);
  EXPECT_EQ(sudoku.train.epochs, 25);
  EXPECT_EQ(sudoku.train.cooldown_epoch, 20);

  const RunSpec paper = preset_spec("paper", "sudoku", Recall::kFixed, Norm::kPre);
  EXPECT_EQ(paper.model.width, 256);
  EXPECT_EQ(paper.model.heads, 8);
  EXPECT_EQ(paper.model.blocks, 15);
  EXPECT_EQ(paper.train.epochs, 100);
  EXPECT_EQ(paper.train.lr, 1e-3);
  EXPECT_EQ(paper.data.train_count, 40000);
  EXPECT_NO_THROW(check(paper));

  EXPECT_THROW(preset_spec("gpu", "sudoku", Recall::kExternal, Norm::kPost), Error);
  EXPECT_THROW(preset_spec("cpu", "go", Recall::kExternal, Norm::kPost), Error);
}

TEST(RunDirTest, SpecRoundTripsThroughTrainingJson) {
  TempDir dir;
  RunFolder run(dir.path());
  EXPECT_FALSE(run.is_training_run());
  RunSpec s = preset_spec("cpu", "sudoku", Recall::kExternal, Norm::kPost);
  s.train.seed = 7;
  s.data.data_file = "pool.csv";
  write_file_atomic(run.file(RunFolder::kConfig), to_json(s.model).dump(2) + "\n");
  EXPECT_EQ(run.training_iters(), 30);  // a bare model folder
  EXPECT_EQ(run.evaluation_data().train_count, 40000);  // the task's defaults
  run.write_spec(s);
  EXPECT_TRUE(run.is_training_run());
  const json written = json::parse(read_file(run.file(RunFolder::kTraining)));
  EXPECT_EQ(written.at("schema_version"), kTrainingSchemaVersion);
  const RunSpec back = run.spec();
  EXPECT_EQ(to_json(back.train), to_json(s.train));
  EXPECT_EQ(to_json(back.data), to_json(s.data));
  EXPECT_EQ(to_json(back.model), to_json(s.model));
  EXPECT_EQ(back.data.base_dir, dir.path());
  EXPECT_EQ(back.data.resolve(back.data.data_file), dir.path() + "/pool.csv");
  EXPECT_EQ(run.evaluation_data().train_count, 4000);
  s.train.training_iters = 12;
  run.write_spec(s);
  EXPECT_EQ(run.training_iters(), 12);

  json newer = written;
  newer["schema_version"] = kTrainingSchemaVersion + 1;
  write_file_atomic(run.file(RunFolder::kTraining), newer.dump());
  EXPECT_EQ(error_of([&] { run.spec(); }),
            run.file(RunFolder::kTraining) + ": schema_version " + std::to_string(kTrainingSchemaVersion + 1) +
                " is newer than this looplab reads (" + std::to_string(kTrainingSchemaVersion) + ")");
  // Version 2 called T "max_iters".
  json version2 = written;
  version2["schema_version"] = 2;
  version2["train"]["max_iters"] = version2["train"]["training_iters"];
  version2["train"].erase("training_iters");
  write_file_atomic(run.file(RunFolder::kTraining), version2.dump());
  EXPECT_EQ(run.spec().schema_version, 2);
  EXPECT_EQ(run.spec().train.training_iters, 30);
  EXPECT_EQ(to_json(run.spec().train), written.at("train"));
  // Typed: an integer written as 1.5 is an error naming the key, not 1.
  json typed = written;
  typed["train"]["training_iters"] = 1.5;
  write_file_atomic(run.file(RunFolder::kTraining), typed.dump());
  EXPECT_EQ(error_of([&] { run.spec(); }),
            run.file(RunFolder::kTraining) + ": key 'train/training_iters': expected an integer, got 1.5");
  typed = written;
  typed["data"]["seed"] = -3;
  write_file_atomic(run.file(RunFolder::kTraining), typed.dump());
  EXPECT_EQ(error_of([&] { run.spec(); }),
            run.file(RunFolder::kTraining) + ": key 'data/seed': expected an integer >= 0, got -3");
  // A file of looplab's recipe before 2026-12-03 (schema 1, or none) is still read.
  json older = written;
  older["schema_version"] = 1;
  write_file_atomic(run.file(RunFolder::kTraining), older.dump());
  EXPECT_EQ(run.spec().schema_version, 1);
  older.erase("schema_version");
  write_file_atomic(run.file(RunFolder::kTraining), older.dump());
  EXPECT_EQ(run.spec().schema_version, 1);
  write_file_atomic(run.file(RunFolder::kTraining), "{\"train\": {}}");
  EXPECT_EQ(error_of([&] { run.spec(); }), run.file(RunFolder::kTraining) + ": expected the keys 'train' and 'data'");
  write_file_atomic(run.file(RunFolder::kTraining), "{\"train\"");
  EXPECT_EQ(error_of([&] { run.spec(); }).rfind(run.file(RunFolder::kTraining) + ": not valid JSON (", 0), 0u);
}

// ---- the committed run folders: reading and writing them back loses no key --------------

#ifdef LOOPLAB_SOURCE_DIR
const std::string kModels = std::string(LOOPLAB_SOURCE_DIR) + "/models";
// Reports as looplab wrote them before files carried a schema_version (copies of committed
// run folders' files of 2026-11-30; the run folders themselves are retrained and rewritten).
const std::string kOldReports = std::string(LOOPLAB_SOURCE_DIR) + "/tests/data/reports";

// `written` equals `original` exactly (values, key sets, integer versus double) apart from
// the added schema_version (files written since versions exist have it already).
// `renames`: keys that a later schema version renamed (old name -> new), written under the new.
void expect_same_apart_from_version(json original, json written, int version = 1,
                                    const std::map<std::string, std::string>& renames = {}) {
  ASSERT_TRUE(written.contains("schema_version"));
  EXPECT_EQ(written["schema_version"], version);
  for (const auto& [from, to] : renames) {
    ASSERT_TRUE(original.contains(from)) << from;
    original[to] = original[from];
    original.erase(from);
  }
  written.erase("schema_version");
  original.erase("schema_version");
  EXPECT_EQ(written, original);
  EXPECT_EQ(written.dump(), original.dump());
}

TEST(OldReports, AnalysisReadsAndWritesBackUnchanged) {
  const std::string path = kOldReports + "/analysis-before-versions.json";
  const json original = json::parse(read_file(path));
  ASSERT_FALSE(original.contains("schema_version"));
  const AnalysisReport r = read_report<AnalysisReport>(path);
  EXPECT_EQ(r.schema_version, 1);
  ASSERT_EQ(r.splits.count("val"), 1u);
  EXPECT_GT(r.splits.at("val").detail.count, 0);
  expect_same_apart_from_version(original, r);
}

TEST(OldReports, EvalReadsAndWritesBackUnchanged) {
  const std::string path = kOldReports + "/eval-before-versions.json";
  const json original = json::parse(read_file(path));
  ASSERT_FALSE(original.contains("schema_version"));
  const EvalReport r = read_report<EvalReport>(path);
  EXPECT_EQ(r.schema_version, 1);
  EXPECT_FALSE(r.splits.empty());
  expect_same_apart_from_version(original, r);
}

TEST(OldReports, MetricsReadAndWriteBackUnchanged) {
  const std::string path = kOldReports + "/metrics-before-versions.jsonl";
  std::istringstream in(read_file(path));
  std::vector<json> original;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) original.push_back(json::parse(line));
  const std::vector<EpochMetrics> m = read_metrics(path);
  ASSERT_EQ(m.size(), original.size());
  ASSERT_FALSE(m.empty());
  ASSERT_FALSE(original[0].contains("schema_version"));
  for (size_t i = 0; i < m.size(); ++i) {
    SCOPED_TRACE("line " + std::to_string(i + 1));
    EXPECT_EQ(m[i].schema_version, 1);
    // Version 2 renamed the exact accuracies.
    expect_same_apart_from_version(original[i], m[i], 2, {{"train_accuracy", "train_exact"}, {"val_accuracy", "val_exact"}});
  }
}
// Every committed run folder: its reports read, and write back unchanged; its settings read.
TEST(CommittedRuns, EveryRunFolderReads) {
  int folders = 0;
  for (const auto& entry : fs::directory_iterator(kModels)) {
    if (!entry.is_directory()) continue;
    SCOPED_TRACE(entry.path().string());
    ++folders;
    const RunFolder run(entry.path().string());
    if (run.has(RunFolder::kTraining)) {
      const RunSpec s = run.spec();
      EXPECT_NO_THROW(check(s));
      EXPECT_EQ(s.data.task, s.model.task);
    }
    if (run.has(RunFolder::kEval)) {
      expect_same_apart_from_version(json::parse(read_file(run.file(RunFolder::kEval))),
                                     read_report<EvalReport>(run.file(RunFolder::kEval)));
    }
    if (run.has(RunFolder::kEvalAccelerated)) {  // (none committed today; its version is 2)
      const AcceleratedReport r = read_report<AcceleratedReport>(run.file(RunFolder::kEvalAccelerated));
      EXPECT_FALSE(r.splits.empty());
    }
    if (run.has(RunFolder::kEvalTrace)) {
      const json original = json::parse(read_file(run.file(RunFolder::kEvalTrace)));
      EXPECT_EQ(json(read_report<TraceReport>(run.file(RunFolder::kEvalTrace))), original);
    }
    if (run.has(RunFolder::kAnalysis)) {
      expect_same_apart_from_version(json::parse(read_file(run.file(RunFolder::kAnalysis))),
                                     read_report<AnalysisReport>(run.file(RunFolder::kAnalysis)));
    }
    std::istringstream in(run.has(RunFolder::kMetrics) ? read_file(run.file(RunFolder::kMetrics)) : "");
    std::vector<json> lines;
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) lines.push_back(json::parse(line));
    const std::vector<EpochMetrics> m = run.metrics();
    ASSERT_EQ(m.size(), lines.size());
    for (size_t i = 0; i < m.size(); ++i) {
      const bool v1 = lines[i].value("schema_version", 1) == 1;
      expect_same_apart_from_version(lines[i], m[i], 2,
                                     v1 ? std::map<std::string, std::string>{{"train_accuracy", "train_exact"}, {"val_accuracy", "val_exact"}}
                                        : std::map<std::string, std::string>{});
    }
  }
  EXPECT_GT(folders, 0);
}
#endif

}  // namespace
}  // namespace looplab
