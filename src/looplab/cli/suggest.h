// Helpful one-line messages for command-line mistakes: "did you mean ...?" for a mistyped
// command or option, the command list when none was given, checks of names with the nearest valid
// one. Torch-free (CLI11, the task registry and model/config.h's names).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "looplab/util/nearest.h"

namespace looplab::cli {

using looplab::nearest;

// Explains why parsing `args` (argv without the program name, in command-line order) failed,
// given the root app as it was set up and the exception CLI11 threw. Returns one line, without
// the "looplab: error: " prefix and without a trailing newline:
//  - "a subcommand is required (one of: info, init, ...)" when no command was given;
//    "a subcommand of 'data' is required (one of: ...)" for a group given without one;
//  - "unknown command 'trian'; did you mean 'train'?", "unknown command 'data gne'; did
//    you mean 'gen'?" or "unknown command 'xyz' (one of: info, init, ...)";
//  - "unknown option '--lrr' for 'train'; did you mean '--lr'?" or "unknown option '--x' for
//    'train' (run 'looplab train --help' for its options)";
//  - otherwise e.what() unchanged.
// It reads the words CLI11 left over in each app (their parse state): call it on the apps of the
// failed parse, before any other parse.
std::string explain_parse_error(const CLI::App& root, const std::vector<std::string>& args, const CLI::ParseError& e);

// The command list printed for `looplab` with no arguments:
//   usage: looplab [--threads N] COMMAND [OPTIONS]
//
//   commands:
//     info      <description>
//     ...
//
//   run 'looplab COMMAND --help' for a command's options
std::string command_list(const CLI::App& root);

// Checks for CLI11 options that report a bad value while parsing (so before a missing option),
// with the library's own message and the nearest valid value: `parse` throws looplab::Error.
CLI::Validator checked(const std::string& what, std::function<void(const std::string&)> parse,
                       std::vector<std::string> names);
CLI::Validator task_name();
CLI::Validator recall_name();
CLI::Validator norm_name();

}  // namespace looplab::cli
