// ATen operator calls, counted through LibTorch's profiler hook (a global RecordFunction
// callback): how many operators a piece of work dispatches. On CUDA each top-level operator is
// at least one kernel launch, so these counts say how far a block is from a few fused kernels
// (issue 47); they are measured the same on any device, the CPU's plain engine included.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace looplab::bench {

struct OpCount {
  int64_t top = 0;  // "aten::" operators called from outside any other (on any thread)
  int64_t all = 0;  // every operator call, those inside other operators included
  std::map<std::string, int64_t> top_names;  // the top-level ones by name ("aten::linear": 4)
  // Wall seconds inside the top-level ones, by name, on the thread that called count_ops (the
  // rest of that thread's time is looplab's own code: the fused engine's kernels and products).
  std::map<std::string, double> top_seconds;
};

// The operators `work` dispatches, on every thread, while it runs. Not reentrant.
OpCount count_ops(const std::function<void()>& work);

// a's counts less b's (names whose count is then 0 are left out).
OpCount operator-(const OpCount& a, const OpCount& b);

}  // namespace looplab::bench
