// The commands the tasks bring (tasks/task.h): `looplab data TASK` runs a task's generator,
// `looplab TASK TOOL` one of its tools. Built from the registry: no task is named here.
#include <memory>

#include "looplab/cli/commands.h"
#include "looplab/tasks/registry.h"

namespace looplab::cli {

// One Tool as a subcommand: each parameter an option, flag or positional; values as text.
Command add_tool(CLI::App* parent, const Tool& tool, const int& threads) {
  auto* app = parent->add_subcommand(tool.name, tool.help);
  auto values = std::make_shared<Values>();
  auto flags = std::make_shared<std::map<std::string, bool>>();
  for (const Parameter& p : tool.parameters) {
    if (!p.default_value.empty()) (*values)[p.name] = p.default_value;
    CLI::Option* o = nullptr;
    if (p.kind == Parameter::kFlag) {
      o = app->add_flag("--" + p.name, (*flags)[p.name], p.help);
    } else {
      o = app->add_option((p.kind == Parameter::kPositional ? "" : "--") + p.name, (*values)[p.name], p.help);
      if (!p.default_value.empty()) o->capture_default_str();
    }
    if (p.required) o->required();
  }
  const auto run = tool.run;
  return {app, [values, flags, run, &threads] {
            Values v = *values;
            for (const auto& [name, set] : *flags) v[name] = set ? "true" : "false";
            for (auto it = v.begin(); it != v.end();) it = it->second.empty() ? v.erase(it) : std::next(it);
            run(v, threads);
          }};
}

std::vector<Command> add_task_commands(CLI::App& parent, const int& threads) {
  auto* data = parent.add_subcommand("data", "Generate a task's data as CSV");
  std::vector<Command> generators, out;
  for (const Task* t : all_tasks()) generators.push_back(add_tool(data, t->generator(), threads));
  out.push_back(command_group(data, generators));
  for (const Task* t : all_tasks()) {
    const std::vector<Tool> tools = t->tools();
    if (tools.empty()) continue;
    auto* app = parent.add_subcommand(t->name(), t->tools_help());
    std::vector<Command> subcommands;
    for (const Tool& tool : tools) subcommands.push_back(add_tool(app, tool, threads));
    out.push_back(command_group(app, subcommands));
  }
  return out;
}

}  // namespace looplab::cli
