// Every task by name. The only place besides the task folders that knows which tasks exist.
#pragma once

#include <string>
#include <vector>

#include "looplab/tasks/task.h"

namespace looplab {

// Throws looplab::Error naming the valid tasks.
const Task& task(const std::string& name);
const std::vector<const Task*>& all_tasks();
// "a, b or c": the task names for help texts and messages.
std::string task_names(const std::string& last_sep = " or ");

}  // namespace looplab
