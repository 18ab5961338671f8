// looplab analyze regions | anisotropy | phase: the scalar-model geometry of the paper's
// fixed-point analysis (figure 5, table 3, figure 2) on the command line. No model involved.
#pragma once

#include <vector>

#include "looplab/cli/commands.h"

namespace looplab::cli {

// Registers the three subcommands on `analyze` and appends their Commands to `out`.
void add_geometry_commands(CLI::App* analyze, std::vector<Command>& out);

}  // namespace looplab::cli
