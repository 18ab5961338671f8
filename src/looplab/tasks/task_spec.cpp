#include "looplab/tasks/task_spec.h"

#include "looplab/util/error.h"

namespace looplab {

const std::vector<TaskSpec>& all_tasks() {
  // Prefix sums trains on 32 bits and is tested on 512: its grid length follows the input.
  static const std::vector<TaskSpec> tasks = {
      {"prefix-sums", {32}, 1, 2, true},
      {"sudoku", {9, 9}, 10, 10, false},
      {"chess", {8, 8}, 12, 2, false},
  };
  return tasks;
}

const TaskSpec& task_spec(const std::string& name) {
  std::string names;
  for (const TaskSpec& t : all_tasks()) {
    if (t.name == name) return t;
    names += (names.empty() ? "" : ", ") + t.name;
  }
  throw Error("unknown task '" + name + "' (expected one of: " + names + ")");
}

}  // namespace looplab
