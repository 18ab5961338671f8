// looplab serve: the web lab (src/looplab/serve, web/) on 127.0.0.1.
#pragma once

#include "looplab/cli/commands.h"

namespace looplab::cli {

Command add_serve(CLI::App& parent);

}  // namespace looplab::cli
