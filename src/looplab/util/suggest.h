// Helpful one-line messages for command-line mistakes: "did you mean ...?" for a mistyped
// command or option, the command list when none was given. Torch-free; depends on CLI11 only.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace looplab::cli {

// Levenshtein edit distance (insertions, deletions, substitutions), where a transposition of
// two adjacent characters also counts as one edit (optimal string alignment distance).
size_t edit_distance(const std::string& a, const std::string& b);

// The candidate nearest to `word`, or "" when none is close enough. Close enough: edit distance
// <= max(1, word.size() / 3), or the only candidate that starts with `word`. Among the close
// ones the smallest distance wins; on a tie, the first in the candidates' order.
std::string nearest(const std::string& word, const std::vector<std::string>& candidates);

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
// It reads only the apps' definitions (not their parse state), so it may be called after the
// failed parse.
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
