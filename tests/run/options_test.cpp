// The options tables (util/options.h): training.json as the hand-written code wrote it is read and
// written back the same by the tables; every flag of train is a sweep key and a JSON key; the
// old names still read; the ranges name their option; eval's and analyze's tables parse and
// check as their flags always did.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "looplab/analysis/analysis_options.h"
#include "looplab/eval/eval_options.h"
#include "looplab/io/json_reader.h"
#include "looplab/run/run_options.h"
#include "looplab/run/run_spec.h"
#include "looplab/util/error.h"

namespace looplab {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// The keys a table added after the first training.json (absent there: the struct's default).
const std::set<std::string> kAddedLater = {"precision", "gradient", "phantom_steps", "phantom_damping", "batch_tolerance",
                                           "jacobian_weight", "ema", "halt_weight", "train_file", "val_file",
                                           "hard_file", "data_file", "skip_bad", "train_size", "hard_size", "border"};

// Every committed training.json, written by the code before the tables (each key by hand in
// to_json): its "train" and "data" objects read and write back to the same keys and values, a
// renamed key under its new name, an absent later key at its default.
TEST(OptionTables, CommittedTrainingJsonReadsAndWritesBackTheSame) {
  int files = 0;
  for (const auto& entry : fs::directory_iterator(std::string(LOOPLAB_SOURCE_DIR) + "/models")) {
    const fs::path file = entry.path() / "training.json";
    if (!fs::exists(file)) continue;
    SCOPED_TRACE(file.string());
    ++files;
    const json j = json::parse(std::ifstream(file));
    for (const char* part : {"train", "data"}) {
      const json& in = j.at(part);
      const json out = std::string(part) == "train" ? to_json(train_options_from_json(in, file.string()))
                                                    : to_json(data_options_from_json(in, file.string()));
      const std::map<std::string, std::string> renamed = {{"max_iters", "training_iters"}, {"tolerance", "batch_tolerance"}};
      for (const auto& [key, value] : in.items()) {
        const auto r = renamed.find(key);
        const std::string now = std::string(part) == "train" && r != renamed.end() ? r->second : key;
        ASSERT_TRUE(out.contains(now)) << part << "." << key << " is not written back";
        EXPECT_EQ(out.at(now), value) << part << "." << key;
      }
      for (const auto& [key, value] : out.items()) {
        const bool in_file = in.contains(key) || (key == "training_iters" && in.contains("max_iters")) ||
                             (key == "batch_tolerance" && in.contains("tolerance"));
        if (!in_file) EXPECT_TRUE(kAddedLater.count(key)) << part << "." << key << " is written but was never in the file";
      }
    }
  }
  EXPECT_GT(files, 3);
}

// train's flags: each one a sweep key (find_run_option) that sets what the JSON then holds.
TEST(OptionTables, EveryTrainFlagSetsTheJsonKeyOfItsName) {
  const json train = to_json(TrainOptions{}), data = to_json(DataOptions{});
  const std::set<std::string> model_sizes = {"width", "heads", "halt-head"};
  for (const RunOption& o : run_options()) {
    SCOPED_TRACE(o.key);
    ASSERT_EQ(find_run_option(o.key), &o);
    if (model_sizes.count(o.key)) continue;
    const std::string k = o.json_key();
    // From TrainOptions's table or DataOptions's, never both; its key in that part's JSON.
    const bool in_train = find_option(train_option_table(), o.key) != nullptr;
    ASSERT_NE(in_train, find_option(data_option_table(), o.key) != nullptr) << o.key;
    ASSERT_TRUE((in_train ? train : data).contains(k)) << k;
    // Set it through the flag's table line to a value other than the default; the JSON shows it.
    RunSpec s;
    OptionValue v;
    switch (o.kind) {
      case OptionKind::kInt: v = int64_t{17}; break;
      case OptionKind::kUnsigned: v = int64_t{18}; break;
      case OptionKind::kNumber: v = 0.375; break;
      case OptionKind::kFlag: v = true; break;
      case OptionKind::kText: v = std::string("x-y"); break;
      case OptionKind::kList: v = std::vector<std::string>{"a"}; break;
    }
    o.set(s, v);
    const json after = in_train ? to_json(s.train) : to_json(s.data);
    EXPECT_EQ(to_text(v), after.at(k).is_string() ? after.at(k).get<std::string>() : after.at(k).dump()) << k;
  }
  // The names that are not flags: chosen by --preset and --task.
  EXPECT_EQ(find_run_option("preset"), nullptr);
  EXPECT_EQ(find_run_option("task"), nullptr);
  // A data seed is --data-seed on the command line, "seed" in training.json's data.
  EXPECT_EQ(find_run_option("data-seed")->json_key(), "seed");
}

TEST(OptionTables, OldNamesStillRead) {
  ASSERT_NE(find_run_option("tolerance"), nullptr);
  EXPECT_EQ(find_run_option("tolerance")->key, "batch-tolerance");
  EXPECT_EQ(find_run_option("max-iters")->key, "training-iters");
  json j = to_json(TrainOptions{});
  j.erase("batch_tolerance");
  j["tolerance"] = 1e-3;  // training.json before 2026-12-07
  EXPECT_EQ(train_options_from_json(j, "t.json").batch_tolerance, 1e-3);
  j["batch_tolerance"] = 2e-3;  // the new key wins where both are there
  EXPECT_EQ(train_options_from_json(j, "t.json").batch_tolerance, 2e-3);
  EXPECT_EQ(find_option(eval_option_table(), "splits")->key, "split");
  EXPECT_EQ(find_option(analyze_option_table(), "tol")->key, "tolerance");
}

TEST(OptionTables, RangesNameTheirOption) {
  RunSpec s = preset_spec("cpu", "prefix-sums", Recall::kExternal, Norm::kPost);
  auto complaint = [&] { return error_of([&] { check(s); }); };
  s.train.batch_tolerance = 0;
  EXPECT_EQ(complaint(), "batch_tolerance must be positive");
  s.train.batch_tolerance = 1e-4, s.train.weight_decay = -0.5;
  EXPECT_EQ(complaint(), "weight_decay must be >= 0");
  s.train.weight_decay = 0.01, s.train.phantom_damping = 0;
  EXPECT_EQ(complaint(), "phantom_damping must lie in (0, 1]");
  s.train.phantom_damping = 1, s.train.gradient = "adjoint";
  EXPECT_EQ(complaint(), "gradient 'adjoint': expected bptt, one-step, phantom or implicit");
  s.train.gradient = "phantom", s.train.alpha = 0.5;
  EXPECT_EQ(complaint(), "alpha must be 1 with --gradient phantom");
  s.train.alpha = 1, s.data.hard_bits = 0;
  EXPECT_EQ(complaint(), "hard_bits must be >= 1");
  s.data.hard_bits = 512;
  EXPECT_EQ(complaint(), "(no error)");
}

TEST(OptionTables, EvalOptionsParseAndCheckAsTheFlags) {
  EvalRunOptions e;
  const auto& t = eval_option_table();
  find_option(t, "iters")->set(e, std::string("3:9"));
  EXPECT_EQ(e.first, 3);
  EXPECT_EQ(e.last, 9);
  find_option(t, "iters")->set(e, int64_t{40});  // a sweep file's `iters = 40`
  EXPECT_EQ(e.first, 1);
  EXPECT_EQ(e.last, 40);
  EXPECT_EQ(error_of([&] { find_option(t, "iters")->set(e, std::string("9:3")); }),
            "iters '9:3': expected FIRST:LAST with 1 <= FIRST <= LAST, e.g. 1:500");
  find_option(t, "split")->set(e, std::string("hard,val"));
  EXPECT_EQ(e.splits, (std::vector<std::string>{"hard", "val"}));
  find_option(t, "split")->set(e, std::string("val,test"));
  EXPECT_EQ(error_of([&] { check(e); }), "split 'test': expected train, val or hard");
  e.splits = {"val"};
  e.batch = 0;
  EXPECT_EQ(error_of([&] { check(e); }), "batch must be >= 1");
  e.batch = 10, e.early_exit = 1e-3, e.scaling = true;
  EXPECT_NE(error_of([&] { check(e); }).find("--scaling and --early-exit ask for two evaluations"), std::string::npos);
  e.early_exit = 0;
  EXPECT_EQ(eval_kind(e), EvalKind::kScaling);
  e.halt_threshold = 0.5;
  EXPECT_EQ(error_of([&] { check(e); }), "halt_threshold needs exactly one --halt rule");
  e.halt = {"confidence"};
  EXPECT_EQ(error_of([&] { check(e); }), "(no error)");
  e.precision = "fp8";
  EXPECT_EQ(error_of([&] { check(e); }), "precision 'fp8': expected float32 or bf16-mixed");
  // The flags of other evaluations and --device are the command line's alone.
  for (const char* k : {"early-exit", "anderson", "halt", "halt-threshold", "scaling", "device"})
    EXPECT_FALSE(find_option(t, k)->in_sweeps) << k;
}

// What the flags took before the tables and still take: the old weights name "latest" (checked
// by RunFolder::weights, not the table), float16, a seed of all 64 bits; an empty list of splits is
// refused.
TEST(OptionTables, WhatTheFlagsTookBefore) {
  EvalRunOptions e;
  e.weights = "latest", e.dtype = "float16";
  EXPECT_EQ(error_of([&] { check(e); }), "(no error)");
  e.splits = {};
  EXPECT_EQ(error_of([&] { check(e); }), "split is empty: name at least one");
  AnalyzeRunOptions a;
  find_option(analyze_option_table(), "seed")->set(a, uint64_t{18446744073709551615u});
  EXPECT_EQ(a.analysis.seed, 18446744073709551615u);
  TrainOptions o;
  o.seed = 9223372036854775809u;  // 2^63 + 1
  const json j = to_json(o);
  EXPECT_EQ(j.at("seed").get<uint64_t>(), 9223372036854775809u);
  EXPECT_EQ(train_options_from_json(j, "t.json").seed, 9223372036854775809u);
  json bad = j;
  bad["epochs"] = 9223372036854775809u;  // an int64 option: named with its key
  EXPECT_EQ(error_of([&] { train_options_from_json(bad, "t.json"); }), "t.json: key 'train/epochs': integer 9223372036854775809 is too large");
}

TEST(OptionTables, AnalyzeOptionsReachTheAnalysis) {
  AnalyzeRunOptions a;
  const auto& t = analyze_option_table();
  find_option(t, "iters")->set(a, int64_t{77});
  find_option(t, "tol")->set(a, 1e-6);
  find_option(t, "detail")->set(a, int64_t{0});
  find_option(t, "seed")->set(a, int64_t{5});
  EXPECT_EQ(a.analysis.convergence.max_iters, 77);
  EXPECT_EQ(a.analysis.convergence.tolerance, 1e-6);
  EXPECT_EQ(a.analysis.detail_count, 0);
  EXPECT_EQ(a.analysis.seed, 5u);
  EXPECT_EQ(error_of([&] { find_option(t, "seed")->set(a, int64_t{-1}); }), "expected an integer >= 0");
  a.analysis.convergence.tolerance = 0;
  EXPECT_EQ(error_of([&] { check(a); }), "tolerance must be positive");
}

}  // namespace
}  // namespace looplab
