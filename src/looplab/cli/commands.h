// The subcommands of `looplab`. Each add_* registers its options on the parent app and
// returns the function that runs it once parsing succeeded. Commands are thin: they parse,
// call the library, print.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

#include "looplab/model/config.h"

namespace looplab::cli {

struct Command {
  CLI::App* app;
  std::function<void()> run;  // throws looplab::Error on bad input
};

Command add_info(CLI::App& parent);
Command add_init(CLI::App& parent);
Command add_forward(CLI::App& parent);
Command add_bench(CLI::App& parent);
Command add_train(CLI::App& parent);
Command add_data(CLI::App& parent);
Command add_eval(CLI::App& parent);
Command add_demo(CLI::App& parent);
Command add_sudoku(CLI::App& parent);
Command add_solve(CLI::App& parent);

// Options that describe a model, shared by info and init.
struct ModelOptions {
  std::string task = "prefix-sums";
  std::string recall = "external";
  std::string norm = "post";
  int64_t width = 256;
  int64_t heads = 8;
  int64_t mlp_ratio = 4;
  int64_t blocks = 0;   // 0: the default (1, or 15 for the fixed baseline)
  int64_t window = 5;
};
void add_model_options(CLI::App* app, ModelOptions& o);
ModelConfig model_config(const ModelOptions& o);  // validated; throws looplab::Error

}  // namespace looplab::cli
