// looplab explore: the chapter 7 recurrence illustrations (src/looplab/explore) on the command line.
#pragma once

#include "looplab/cli/commands.h"

namespace looplab::cli {

Command add_explore(CLI::App& parent);

}  // namespace looplab::cli
