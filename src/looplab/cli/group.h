// A command made of subcommands (looplab data, sudoku, bench): it runs whichever was parsed.
#pragma once

#include <vector>

#include "looplab/cli/commands.h"

namespace looplab::cli {

inline Command command_group(CLI::App* app, std::vector<Command> subcommands) {
  app->require_subcommand(1);
  return {app, [subcommands] {
            for (const Command& c : subcommands)
              if (c.app->parsed()) c.run();
          }};
}

}  // namespace looplab::cli
