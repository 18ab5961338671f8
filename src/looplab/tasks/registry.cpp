#include "looplab/tasks/registry.h"

#include "looplab/util/error.h"
#include "looplab/util/list.h"

// Each task folder defines `const Task& NAME_task()` (NAME: the folder). To add a task, add
// its folder and one line to this list (docs/architecture.md).
#define LOOPLAB_TASKS(X) \
  X(prefix_sums)         \
  X(sudoku)              \
  X(chess)               \
  X(mazes)

namespace looplab {

#define LOOPLAB_DECLARE(folder) const Task& folder##_task();
LOOPLAB_TASKS(LOOPLAB_DECLARE)
#undef LOOPLAB_DECLARE

const std::vector<const Task*>& all_tasks() {
#define LOOPLAB_ENTRY(folder) &folder##_task(),
  static const std::vector<const Task*> tasks = {LOOPLAB_TASKS(LOOPLAB_ENTRY)};
#undef LOOPLAB_ENTRY
  return tasks;
}

std::string task_names(const std::string& last_sep) {
  std::vector<std::string> names;
  for (const Task* t : all_tasks()) names.push_back(t->name());
  return join_names(names, last_sep);
}

const Task& task(const std::string& name) {
  for (const Task* t : all_tasks())
    if (t->name() == name) return *t;
  throw Error("unknown task '" + name + "' (expected one of: " + task_names(", ") + ")");
}

}  // namespace looplab
