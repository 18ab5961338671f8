// looplab analyze: fixed-point analysis of trained models and the scalar model's geometry.
#pragma once

#include "looplab/cli/commands.h"

namespace looplab::cli {

Command add_analyze(CLI::App& parent);

}  // namespace looplab::cli
