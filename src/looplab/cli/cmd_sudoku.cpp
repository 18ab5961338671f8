// looplab sudoku: the backtrack-counting solver on files of puzzles, and a file's rating
// statistics. No model involved (the model solves with `looplab solve`).
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "looplab/cli/commands.h"
#include "looplab/cli/group.h"
#include "looplab/io/atomic_file.h"
#include "looplab/tasks/sudoku/dataset.h"
#include "looplab/tasks/sudoku/solver.h"
#include "looplab/util/error.h"

namespace looplab::cli {

namespace {

struct Numbered {
  int64_t line;
  sudoku::Grid question;
  bool has_answer = false;
  sudoku::Grid answer{};
};

// A sudoku-extreme CSV (recognised by its header) or one 81-character puzzle per line
// ('#' starts a comment line).
std::vector<Numbered> read_puzzles(const std::string& path, bool skip_bad) {
  const std::string text = read_file(path);
  std::vector<Numbered> out;
  if (text.rfind("source,", 0) == 0 || text.find(",question,") != std::string::npos) {
    const sudoku::Dataset d = sudoku::read_csv(path, skip_bad);
    int64_t row = 1;
    for (const auto& p : d.puzzles) out.push_back({++row, p.question, true, p.answer});
    return out;
  }
  std::istringstream in(text);
  std::string line;
  for (int64_t n = 1; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    sudoku::Grid g{};
    std::string why;
    if (!sudoku::parse_grid(line, g, why)) {
      if (skip_bad) continue;
      throw Error(path + ":" + std::to_string(n) + ": " + why);
    }
    out.push_back({n, g});
  }
  if (out.empty()) throw Error(path + ": no puzzles");
  return out;
}

Command add_solve(CLI::App* parent) {
  auto* app = parent->add_subcommand("solve", "Solve every puzzle of a file; print each solution and its backtracks");
  struct Options {
    std::string file;
    bool skip_bad = false, pretty = false;
  };
  auto o = std::make_shared<Options>();
  app->add_option("FILE", o->file, "81-character lines, or a CSV with header source,question,answer,rating")->required();
  app->add_flag("--skip-bad", o->skip_bad, "count and skip bad rows instead of stopping at the first");
  app->add_flag("--pretty", o->pretty, "print each solution as a 9x9 grid");
  return {app, [o] {
            const auto puzzles = read_puzzles(o->file, o->skip_bad);
            const auto start = std::chrono::steady_clock::now();
            int64_t unique = 0, none = 0, multiple = 0, disagree = 0;
            for (const Numbered& p : puzzles) {
              const sudoku::SolveResult r = sudoku::solve(p.question, 2);
              const char* verdict = r.solutions == 0 ? "no solution" : r.solutions == 1 ? "unique" : "several solutions";
              (r.solutions == 0 ? none : r.solutions == 1 ? unique : multiple) += 1;
              std::string extra;
              if (p.has_answer && r.solutions >= 1 && r.solution != p.answer) {
                ++disagree;
                extra = " (differs from the file's answer)";
              }
              std::printf("line %lld: %s  backtracks %lld  %s%s\n", static_cast<long long>(p.line),
                          r.solutions ? sudoku::to_string(r.solution).c_str() : std::string(81, '-').c_str(),
                          static_cast<long long>(r.backtracks), verdict, extra.c_str());
              if (o->pretty && r.solutions) std::printf("%s\n", sudoku::to_pretty(r.solution).c_str());
            }
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            std::printf("%zu puzzles: %lld unique, %lld with several solutions, %lld without; %.0f puzzles per second\n",
                        puzzles.size(), static_cast<long long>(unique), static_cast<long long>(multiple),
                        static_cast<long long>(none), s > 0 ? puzzles.size() / s : 0.0);
            if (disagree) throw Error(o->file + ": " + std::to_string(disagree) + " solutions differ from the file's answers");
          }};
}

Command add_stats(CLI::App* parent) {
  auto* app = parent->add_subcommand("stats", "Rating percentiles and the 80th-percentile easy/hard split of a CSV");
  struct Options {
    std::string file;
    bool skip_bad = false;
  };
  auto o = std::make_shared<Options>();
  app->add_option("FILE", o->file, "CSV with header source,question,answer,rating")->required();
  app->add_flag("--skip-bad", o->skip_bad, "count and skip bad rows");
  return {app, [o] {
            const sudoku::Dataset d = sudoku::read_csv(o->file, o->skip_bad);
            if (d.skipped) std::printf("skipped %lld bad rows\n", static_cast<long long>(d.skipped));
            std::cout << sudoku::rating_report(d.puzzles);
          }};
}

}  // namespace

Command add_sudoku(CLI::App& parent) {
  auto* app = parent.add_subcommand("sudoku", "The backtrack-counting sudoku solver and puzzle statistics");
  return command_group(app, {add_solve(app), add_stats(app)});
}

}  // namespace looplab::cli
