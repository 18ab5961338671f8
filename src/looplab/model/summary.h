// What `looplab info` shows of a model: its configuration, its exact parameter count by part
// (counted from the real modules, not from a formula) and the engine its blocks take on this
// machine (model/engine/engine.h).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "looplab/model/config.h"

namespace looplab {

// {"config", "parameters", "breakdown": {"projection", "recur_blocks", "head"}, "engine"}; the
// engine is the CPU's in float32.
nlohmann::json model_summary(const ModelConfig& c);

// The configuration (describe(c)), the counts with thousands separators, the runtime (LibTorch,
// threads, CUDA) and the engine in float32 and under bf16-mixed.
std::string model_summary_text(const ModelConfig& c);

}  // namespace looplab
