// Sweep files: the product of the axes, include and exclude, the folder names, and one clear
// error (file, line, key) for each kind of mistake.
#include "looplab/sweep/sweep_file.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <filesystem>
#include <fstream>

#include "looplab/util/error.h"

namespace looplab::sweep {
namespace {

std::string write(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "looplab_sweep_file_test";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

std::string error_of(const std::string& text) {
  try {
    load_sweep(write("bad.toml", text));
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SweepFile, ProductIncludeExcludeAndNames) {
  const Sweep sw = load_sweep(write("grid.toml", R"(
[base]
task = "prefix-sums"
width = 16
heads = 2
lr = 3e-4

[axes]
recall = ["none", "external"]
norm = ["pre", "post"]
seed = [0, 1]

[[exclude]]
recall = "none"
norm = ["pre"]

[[include]]
recall = "fixed"
norm = "post"
seed = [7, 8]
)"));
  EXPECT_EQ(sw.name, "grid");
  EXPECT_EQ(sw.out, (std::filesystem::temp_directory_path() / "looplab_sweep_file_test" / "grid").string());
  // 2 x 2 x 2 = 8, less the 2 of none/pre, plus the included two; the first axis outermost.
  ASSERT_EQ(sw.runs.size(), 8u);
  EXPECT_EQ(sw.runs[0].name, "recall-none_norm-post_seed-0");
  EXPECT_EQ(sw.runs[1].name, "recall-none_norm-post_seed-1");
  EXPECT_EQ(sw.runs[2].name, "recall-external_norm-pre_seed-0");
  EXPECT_EQ(sw.runs[6].name, "recall-fixed_norm-post_seed-7");
  for (size_t i = 0; i < sw.runs.size(); ++i) {
    EXPECT_EQ(sw.runs[i].index, static_cast<int64_t>(i));
    EXPECT_EQ(sw.runs[i].spec.model.width, 16);
    EXPECT_DOUBLE_EQ(sw.runs[i].spec.train.lr, 3e-4);
  }
  EXPECT_EQ(sw.runs[2].spec.model.norm, Norm::kPre);
  EXPECT_EQ(sw.runs[3].spec.train.seed, 1u);
  EXPECT_EQ(sw.runs[6].spec.model.recall, Recall::kFixed);
  EXPECT_EQ(sw.runs[7].name, "recall-fixed_norm-post_seed-8");
  // The same file names the same runs.
  const Sweep again = load_sweep(sw.file);
  for (size_t i = 0; i < sw.runs.size(); ++i) EXPECT_EQ(again.runs[i].name, sw.runs[i].name);
}

TEST(SweepFile, NumbersNameFoldersByValue) {
  const Sweep sw = load_sweep(write("lr.toml", "[axes]\nlr = [1e-4, 0.0003, 1e-3]\n"));
  ASSERT_EQ(sw.runs.size(), 3u);
  EXPECT_EQ(sw.runs[0].name, "lr-0.0001");
  EXPECT_EQ(sw.runs[1].name, "lr-0.0003");
  EXPECT_EQ(sw.runs[2].name, "lr-0.001");
  EXPECT_EQ(sw.eval.last, 500);
  EXPECT_TRUE(sw.analyze_enabled);
}

// [eval] and [analyze] set the fields of looplab eval's and analyze's options; the rest keep
// the commands' defaults.
TEST(SweepFile, EvalAndAnalyzeAreTheCommandsOptions) {
  const Sweep sw = load_sweep(write("stages.toml", "[axes]\nseed = [0]\n[eval]\niters = 40\ncount = 3\n"
                                                   "[analyze]\ncount = 7\ndetail = 2\niters = 60\ntolerance = 1e-3\n"));
  EXPECT_EQ(sw.eval.first, 1);
  EXPECT_EQ(sw.eval.last, 40);
  EXPECT_EQ(sw.eval.count, 3);
  EXPECT_EQ(sw.eval.batch, EvalRunOptions{}.batch);
  EXPECT_EQ(sw.eval.splits, EvalRunOptions{}.splits);
  EXPECT_EQ(sw.analyze.count, 7);
  EXPECT_EQ(sw.analyze.analysis.detail_count, 2);
  EXPECT_EQ(sw.analyze.analysis.convergence.max_iters, 60);
  EXPECT_EQ(sw.analyze.analysis.convergence.tolerance, 1e-3);
  EXPECT_EQ(sw.analyze.analysis.arnoldi_steps, analysis::AnalysisOptions{}.arnoldi_steps);
  EXPECT_EQ(sw.analyze.splits, AnalyzeRunOptions{}.splits);
  const Sweep plain = load_sweep(write("plain.toml", "[axes]\nseed = [0]\n"));
  EXPECT_EQ(plain.analyze.count, 100);
  EXPECT_EQ(plain.analyze.analysis.detail_count, 10);
}

TEST(SweepFile, ErrorsNameFileLineAndKey) {

  EXPECT_NE(error_of("[base]\nlrr = 1e-3\n").find("bad.toml:2: key 'lrr': unknown option, did you mean 'lr'?"),
            std::string::npos)
      << error_of("[base]\nlrr = 1e-3\n");
  EXPECT_NE(error_of("[axes]\nrecall = [\"none\", \"extrnal\"]\n").find("bad.toml:2: key 'recall'"), std::string::npos);
  EXPECT_NE(error_of("[base]\nseed = 1\n[axes]\nseed = [0, 1]\n")
                .find("bad.toml:4: key 'seed': is both an axis and set in [base] (line 2)"),
            std::string::npos);
  EXPECT_NE(error_of("[base]\nepochs = 0\n").find("bad.toml:2: key 'epochs': must be >= 1"), std::string::npos)
      << error_of("[base]\nepochs = 0\n");
  EXPECT_NE(error_of("[base]\nepochs = \"many\"\n").find("bad.toml:2: key 'epochs': expected an integer"),
            std::string::npos);
  EXPECT_NE(error_of("[base\nlr = 1\n").find("bad.toml:1"), std::string::npos) << error_of("[base\nlr = 1\n");
  EXPECT_NE(error_of("[axes]\nseed = [0, 0]\n").find("bad.toml:2: key 'seed': value 0 appears twice"),
            std::string::npos);
  EXPECT_NE(error_of("[axes]\nseed = []\n").find("an axis is a non-empty list"), std::string::npos);
  EXPECT_NE(error_of("[evaluate]\niters = 5\n").find("key 'evaluate': unknown key in the sweep file"),
            std::string::npos);
  EXPECT_NE(error_of("[eval]\nitres = 5\n").find("bad.toml:2: key 'itres': unknown key in [eval], did you mean 'iters'?"),
            std::string::npos);
  EXPECT_NE(error_of("[eval]\nsplits = [\"test\"]\n").find("bad.toml:2: key 'splits': 'test': expected train, val or hard"), std::string::npos);
  // A value of the wrong kind is named once; an empty list of splits, two names of one option, an
  // old name's range: each at its line and under the name the file uses.
  auto from_file = [](const std::string& e) { return e.substr(std::min(e.size(), e.find("bad.toml"))); };
  EXPECT_EQ(from_file(error_of("[eval]\nsplit = []\n")),
            "bad.toml:2: key 'split': expected an integer, a number, a string, a boolean or a list of strings");
  EXPECT_EQ(from_file(error_of("[eval]\nsplit = \"\"\n")), "bad.toml:2: key 'split': is empty: name at least one");
  EXPECT_EQ(from_file(error_of("[eval]\nsplit = [\"val\"]\nsplits = [\"hard\"]\n")),
            "bad.toml:3: key 'splits': sets what 'split' sets (split)");
  EXPECT_EQ(from_file(error_of("[base]\ntolerance = 0\n")), "bad.toml:2: key 'tolerance': must be positive");
  EXPECT_NE(error_of("[axes]\nseed = [0]\n[[include]]\nseed = 0\n").find("have the same settings (seed-0)"),
            std::string::npos);
  EXPECT_NE(error_of("[axes]\nrecall = [\"none\"]\n[[exclude]]\nrecall = \"none\"\n").find("no runs"),
            std::string::npos);
  EXPECT_NE(error_of("[base]\npreset = \"gpu\"\n").find("bad.toml:2: key 'preset'"), std::string::npos);
  try {
    load_sweep("/nonexistent/x.toml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/x.toml: no such sweep file");
  }
}

}  // namespace
}  // namespace looplab::sweep
