// Tests of the command-line suggestions against a real CLI11 app built like looplab's, parsed
// the way main() parses (App::parse(argc, argv)).
#include "looplab/cli/suggest.h"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace looplab::cli {
namespace {

// The shape of looplab's command line: a root that needs one subcommand and takes --threads,
// plain commands, and the groups data and bench that need one subcommand of their own.
struct Looplab {
  CLI::App app{"looplab: a laboratory for looped and recurrent models"};
  int threads = 0;
  std::string task = "prefix-sums", out, dir, iters = "1:500", split = "val,hard", format;
  double lr = 0;
  int64_t epochs = 0, width = 256, bits = 32;
  bool recompute = false, json = false;

  Looplab() {
    app.require_subcommand(1);
    app.add_option("--threads", threads, "LibTorch threads (default: every available core)");
    auto* info = app.add_subcommand("info", "Show a model's architecture and exact parameter count");
    info->add_option("--task", task, "prefix-sums, sudoku or chess");
    info->add_option("--width", width, "hidden width d");
    info->add_flag("--json", json, "print JSON");
    auto* init = app.add_subcommand("init", "Write a freshly initialized model folder");
    init->add_option("--task", task, "prefix-sums, sudoku or chess");
    init->add_option("--out", out, "model folder")->required();
    auto* train = app.add_subcommand("train", "Train with the progressive loss, or --resume a run");
    train->add_option("--task", task, "prefix-sums, sudoku or chess")->capture_default_str();
    train->add_option("--lr", lr, "peak learning rate");
    train->add_option("--out", out, "run folder to create");
    train->add_option("--epochs", epochs, "epochs");
    train->add_flag("--recompute", recompute, "recompute each gradient iteration in the backward pass");
    auto* eval = app.add_subcommand("eval", "Accuracy against iterations on val and hard data");
    eval->add_option("dir", dir, "run or model folder")->required();
    eval->add_option("--iters", iters, "iteration range FIRST:LAST")->capture_default_str();
    eval->add_option("--split", split, "comma-separated splits: train, val, hard")->capture_default_str();
    eval->add_flag("--json", json, "print eval.json to stdout instead of the table");
    auto* data = app.add_subcommand("data", "Generate a task's data as CSV");
    data->require_subcommand(1);
    data->add_subcommand("prefix-sums", "Random bit strings and their prefix parities")
        ->add_option("--bits", bits, "bits per string");
    data->add_subcommand("sudoku", "Rated sudoku puzzles");
    data->add_subcommand("chess", "Chess puzzles from a Lichess CSV");
    auto* bench = app.add_subcommand("bench", "Benchmarks (not tests)");
    bench->require_subcommand(1);
    bench->add_subcommand("block", "matmul GFLOP/s and one block iteration");
    auto* step = bench->add_subcommand("step", "One training step");
    step->add_option("--width", width, "model width");
    step->add_flag("--recompute", recompute, "recompute activations");
    bench->add_subcommand("latency", "Latency of one iteration at batch 1");
    bench->add_subcommand("eval", "Evaluation throughput");
    bench->add_subcommand("sudoku", "Puzzle generation and solving rates");
  }

  // Parses as main() does; returns "" on success, else the explanation of the error.
  std::string explain(const std::vector<std::string>& args) {
    std::vector<std::string> storage = {"looplab"};
    storage.insert(storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& s : storage) argv.push_back(s.data());
    argv.push_back(nullptr);
    try {
      app.parse(static_cast<int>(storage.size()), argv.data());
    } catch (const CLI::ParseError& e) {
      last_error = e.get_name();
      last_what = e.what();
      return explain_parse_error(app, args, e);
    }
    return "";
  }
  std::string last_error, last_what;
};

std::string explain(const std::vector<std::string>& args) { return Looplab().explain(args); }

TEST(EditDistance, Values) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("trian", "train"), 1u);  // one transposition
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("same", "same"), 0u);
  EXPECT_EQ(edit_distance("--lrr", "--lr"), 1u);
  EXPECT_EQ(edit_distance("ab", "ba"), 1u);
  EXPECT_EQ(edit_distance("abc", "ca"), 3u);  // optimal string alignment, not full Damerau
}

TEST(Nearest, PicksTheCloseCandidate) {
  const std::vector<std::string> commands = {"info", "init", "forward", "train", "eval", "data", "bench"};
  EXPECT_EQ(nearest("trian", commands), "train");
  EXPECT_EQ(nearest("evl", commands), "eval");
  EXPECT_EQ(nearest("zzzzzz", commands), "");
  EXPECT_EQ(nearest("", commands), "");
  EXPECT_EQ(nearest("x", {}), "");
}

TEST(Nearest, TiesGoToTheFirstCandidate) {
  EXPECT_EQ(nearest("inft", {"info", "init"}), "info");
  EXPECT_EQ(nearest("inft", {"init", "info"}), "init");
  EXPECT_EQ(nearest("int", {"info", "init"}), "init");  // distance 1 beats distance 2
}

TEST(Nearest, ThresholdGrowsWithTheWord) {
  // max(1, size / 3): 2 edits are allowed from 6 characters on, not below.
  EXPECT_EQ(nearest("--epoc", {"--epochs"}), "--epochs");    // 2 edits, 6 characters
  EXPECT_EQ(nearest("ab", {"xy"}), "");                      // 2 edits, 2 characters
  EXPECT_EQ(nearest("bnch", {"bench"}), "bench");            // 1 edit
}

TEST(Nearest, UniquePrefixCounts) {
  EXPECT_EQ(nearest("--rec", {"--task", "--recompute", "--lr"}), "--recompute");
  EXPECT_EQ(nearest("pre", {"prefix-sums", "sudoku", "chess"}), "prefix-sums");
  EXPECT_EQ(nearest("--re", {"--recompute", "--resume"}), "");  // ambiguous
}

TEST(Explain, NoSubcommand) {
  Looplab l;
  EXPECT_EQ(l.explain({}), "a subcommand is required (one of: info, init, train, eval, data, bench)");
  EXPECT_EQ(l.last_error, "RequiredError");
  EXPECT_EQ(explain({"--threads", "2"}), "a subcommand is required (one of: info, init, train, eval, data, bench)");
  EXPECT_EQ(explain({"--threads=2"}), "a subcommand is required (one of: info, init, train, eval, data, bench)");
}

TEST(Explain, GroupWithoutSubcommand) {
  EXPECT_EQ(explain({"data"}), "a subcommand of 'data' is required (one of: prefix-sums, sudoku, chess)");
  EXPECT_EQ(explain({"bench"}), "a subcommand of 'bench' is required (one of: block, step, latency, eval, sudoku)");
}

TEST(Explain, UnknownCommand) {
  Looplab l;
  EXPECT_EQ(l.explain({"trian"}), "unknown command 'trian'; did you mean 'train'?");
  // CLI11 2.1.2 reports this as a missing subcommand, not as an extra argument.
  EXPECT_EQ(l.last_error, "RequiredError");
  EXPECT_EQ(l.last_what, "A subcommand is required");
  EXPECT_EQ(explain({"xyz"}), "unknown command 'xyz' (one of: info, init, train, eval, data, bench)");
  EXPECT_EQ(explain({"trian", "--lr", "1"}), "unknown command 'trian'; did you mean 'train'?");
}

TEST(Explain, UnknownCommandAfterRootOptions) {
  EXPECT_EQ(explain({"--threads", "2", "trian"}), "unknown command 'trian'; did you mean 'train'?");
  EXPECT_EQ(explain({"--threads=2", "evl", "dir"}), "unknown command 'evl'; did you mean 'eval'?");
}

TEST(Explain, UnknownNestedCommand) {
  Looplab l;
  EXPECT_EQ(l.explain({"data", "prefx-sums"}), "unknown command 'data prefx-sums'; did you mean 'prefix-sums'?");
  EXPECT_EQ(l.last_error, "RequiredError");
  EXPECT_EQ(explain({"bench", "stpe"}), "unknown command 'bench stpe'; did you mean 'step'?");
  EXPECT_EQ(explain({"--threads", "1", "bench", "latncy"}), "unknown command 'bench latncy'; did you mean 'latency'?");
  EXPECT_EQ(explain({"data", "xyz"}), "unknown command 'data xyz' (one of: prefix-sums, sudoku, chess)");
}

TEST(Explain, UnknownOption) {
  Looplab l;
  EXPECT_EQ(l.explain({"train", "--lrr", "0.1"}), "unknown option '--lrr' for 'train'; did you mean '--lr'?");
  EXPECT_EQ(l.last_error, "train");  // CLI11's ExtrasError names the app it came from
  EXPECT_EQ(l.last_what, "The following arguments were not expected: 0.1 --lrr");  // reversed
  EXPECT_EQ(explain({"train", "--lrr"}), "unknown option '--lrr' for 'train'; did you mean '--lr'?");
  EXPECT_EQ(explain({"train", "--lrr=0.1"}), "unknown option '--lrr' for 'train'; did you mean '--lr'?");
  EXPECT_EQ(explain({"train", "--epoch", "3"}), "unknown option '--epoch' for 'train'; did you mean '--epochs'?");
  EXPECT_EQ(explain({"train", "--task", "sudoku", "--recompte"}),
            "unknown option '--recompte' for 'train'; did you mean '--recompute'?");
  EXPECT_EQ(explain({"train", "-lr", "0.1"}), "unknown option '-lr' for 'train'; did you mean '--lr'?");
  EXPECT_EQ(explain({"--threads", "2", "train", "--lr", "0.1", "--ouy", "runs/a"}),
            "unknown option '--ouy' for 'train'; did you mean '--out'?");
}

TEST(Explain, UnknownOptionWithoutNearOne) {
  EXPECT_EQ(explain({"train", "--zzzzzz"}),
            "unknown option '--zzzzzz' for 'train' (run 'looplab train --help' for its options)");
  // Every "-y" is one edit from "-x": no short option is suggested for a short one.
  EXPECT_EQ(explain({"train", "-x"}), "unknown option '-x' for 'train' (run 'looplab train --help' for its options)");
  EXPECT_EQ(explain({"train", "-H"}), "unknown option '-H' for 'train'; did you mean '-h'?");
}

TEST(Explain, UnknownOptionOfNestedCommand) {
  EXPECT_EQ(explain({"bench", "step", "--widht", "64"}),
            "unknown option '--widht' for 'bench step'; did you mean '--width'?");
  EXPECT_EQ(explain({"data", "prefix-sums", "--bit", "8"}),
            "unknown option '--bit' for 'data prefix-sums'; did you mean '--bits'?");
  EXPECT_EQ(explain({"data", "prefix-sums", "--nope"}),
            "unknown option '--nope' for 'data prefix-sums' (run 'looplab data prefix-sums --help' for its options)");
}

TEST(Explain, UnknownOptionWithPositionals) {
  // "3" fills eval's positional dir, so only --iterz is left over.
  EXPECT_EQ(explain({"eval", "--iterz", "3"}), "unknown option '--iterz' for 'eval'; did you mean '--iters'?");
  EXPECT_EQ(explain({"eval", "runs/a", "--splt", "val"}), "unknown option '--splt' for 'eval'; did you mean '--split'?");
}

TEST(Explain, UnknownRootOption) {
  // An option before the command belongs to the root.
  Looplab l;
  EXPECT_EQ(l.explain({"--thread", "2", "train"}), "unknown option '--thread' for 'looplab'; did you mean '--threads'?");
  EXPECT_EQ(l.last_error, "looplab");  // ExtrasError from the root (named after argv[0])
  EXPECT_EQ(explain({"--thread", "2"}), "unknown option '--thread' for 'looplab'; did you mean '--threads'?");
  EXPECT_EQ(explain({"--nope", "info"}), "unknown option '--nope' for 'looplab' (run 'looplab --help' for its options)");
  // Root options are not accepted after the command (no fallthrough).
  EXPECT_EQ(explain({"train", "--threads", "2"}),
            "unknown option '--threads' for 'train' (run 'looplab train --help' for its options)");
}

TEST(Explain, FirstMistakeWins) {
  EXPECT_EQ(explain({"trian", "--lrr"}), "unknown command 'trian'; did you mean 'train'?");
  EXPECT_EQ(explain({"train", "--lrr", "--epoch", "2"}), "unknown option '--lrr' for 'train'; did you mean '--lr'?");
}

TEST(Explain, OtherErrorsUnchanged) {
  Looplab l;
  EXPECT_EQ(l.explain({"train", "--lr", "abc"}), "Could not convert: --lr = abc");
  EXPECT_EQ(l.last_error, "ConversionError");
  EXPECT_EQ(l.explain({"eval"}), "dir is required");
  EXPECT_EQ(l.last_error, "RequiredError");
  EXPECT_EQ(l.explain({"--threads"}), "--threads: 1 required INT missing");
  EXPECT_EQ(l.last_error, "ArgumentMismatch");
  EXPECT_EQ(l.explain({"init"}), "--out is required");
  // A positional word that is not a command where no command is expected.
  EXPECT_EQ(l.explain({"train", "foo"}), "The following argument was not expected: foo");
  EXPECT_EQ(l.explain({"eval", "a", "b"}), "The following argument was not expected: b");
  EXPECT_EQ(l.explain({"train", "info"}), "The following argument was not expected: info");
}

TEST(Explain, SuccessfulParsesStillParse) {
  // The replay must agree with CLI11 where parsing works (values that look like commands,
  // option values, --).
  EXPECT_EQ(explain({"train", "--task", "sudoku", "--lr", "0.1", "--recompute"}), "");
  EXPECT_EQ(explain({"--threads", "2", "eval", "info", "--iters", "1:5"}), "");  // "info" is eval's dir
  EXPECT_EQ(explain({"data", "sudoku"}), "");
  EXPECT_EQ(explain({"bench", "eval"}), "");
  EXPECT_EQ(explain({"train", "--lr=-0.5"}), "");
  EXPECT_EQ(explain({"train", "--lr", "-0.5"}), "");
}

TEST(Explain, NegativeNumbersAreValues) {
  // "-5" is a value, not an option, so the mistake is --epoch.
  EXPECT_EQ(explain({"train", "--epoch", "-5"}), "unknown option '--epoch' for 'train'; did you mean '--epochs'?");
}

TEST(Cli11, VectorParseTakesReversedArguments) {
  // CLI11 2.1.2: App::parse(std::vector<std::string>) expects argv reversed (last word first);
  // parse(argc, argv) reverses for you. explain_parse_error takes args in command-line order.
  Looplab l;
  l.app.parse(std::vector<std::string>{"0.5", "--lr", "train"});
  EXPECT_EQ(l.lr, 0.5);
  EXPECT_TRUE(l.app.got_subcommand("train"));
}

TEST(CommandList, ListsEveryCommandWithItsDescription) {
  Looplab l;
  const std::string list = command_list(l.app);
  EXPECT_EQ(list.rfind("usage: looplab [--threads N] COMMAND [OPTIONS]\n\ncommands:\n", 0), 0u) << list;
  for (const CLI::App* s : l.app.get_subcommands([](const CLI::App*) { return true; })) {
    const std::string line = "  " + s->get_name() + std::string(10 - s->get_name().size(), ' ') +
                             s->get_description() + "\n";
    EXPECT_NE(list.find(line), std::string::npos) << "missing: " << line << "in:\n" << list;
  }
  const std::string tail = "\nrun 'looplab COMMAND --help' for a command's options\n";
  ASSERT_GE(list.size(), tail.size());
  EXPECT_EQ(list.substr(list.size() - tail.size()), tail);
  // Registration order.
  EXPECT_LT(list.find("  info "), list.find("  init "));
  EXPECT_LT(list.find("  eval "), list.find("  data "));
  EXPECT_EQ(list.find("prefix-sums"), std::string::npos);  // only the root's commands
}

TEST(CommandList, AlignsLongNames) {
  CLI::App app{"looplab"};
  app.add_subcommand("a", "first");
  app.add_subcommand("a-very-long-name", "second");
  EXPECT_EQ(command_list(app),
            "usage: looplab [--threads N] COMMAND [OPTIONS]\n\ncommands:\n"
            "  a                 first\n"
            "  a-very-long-name  second\n"
            "\nrun 'looplab COMMAND --help' for a command's options\n");
}

}  // namespace
}  // namespace looplab::cli
