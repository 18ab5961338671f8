// What each task of the paper looks like to the model (SPEC section 3, table 1): its grid,
// its input and output channels and the attention it uses. No LibTorch here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace looplab {

struct TaskSpec {
  std::string name;            // prefix-sums, sudoku, chess
  std::vector<int64_t> grid;   // training grid; its rank is the number of RoPE axes
  int64_t in_channels;
  int64_t out_channels;
  bool local_attention;        // neighbourhood attention (prefix sums) or full attention
};

// Throws looplab::Error naming the valid tasks.
const TaskSpec& task_spec(const std::string& name);
const std::vector<TaskSpec>& all_tasks();

}  // namespace looplab
