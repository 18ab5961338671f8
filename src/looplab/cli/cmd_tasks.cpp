// The commands the tasks bring (tasks/task.h): `looplab data TASK` runs a task's generator,
// `looplab TASK TOOL` one of its tools. Built from the registry: no task is named here.
#include <memory>

#include "looplab/cli/commands.h"
#include "looplab/tasks/registry.h"
#include "looplab/util/error.h"

namespace looplab::cli {

namespace {

// The tasks' own integer parser (tasks/task.h), so the check and the use cannot disagree.
bool is_integer(const std::string& s) {
  try {
    int_value({{"value", s}}, "value");
    return true;
  } catch (const OptionError&) {
    return false;
  }
}

}  // namespace

// One Tool as a subcommand: each parameter an option, flag or positional; values as text. A
// parameter whose default is an integer takes integers only, checked while parsing (so a bad
// value is reported before a missing option).
Command add_tool(CLI::App* parent, const Tool& tool, const int& threads) {
  auto* app = parent->add_subcommand(tool.name, tool.help);
  auto values = std::make_shared<Values>();
  auto flags = std::make_shared<std::map<std::string, bool>>();
  auto options = std::make_shared<std::map<std::string, CLI::Option*>>();
  for (const Parameter& p : tool.parameters) {
    CLI::Option* o = nullptr;
    if (p.kind == Parameter::kFlag) {
      o = app->add_flag("--" + p.name, (*flags)[p.name], p.help);
    } else {
      (*values)[p.name] = p.default_value;
      o = app->add_option((p.kind == Parameter::kPositional ? "" : "--") + p.name, (*values)[p.name], p.help);
      if (!p.default_value.empty()) o->capture_default_str();
      if (is_integer(p.default_value))
        o->type_name("INT")->check(CLI::Validator(
            [](std::string& v) { return is_integer(v) ? std::string() : "'" + v + "' is not an integer"; }, "INT"));
    }
    if (p.required) o->required();
    (*options)[p.name] = o;
  }
  const auto run = tool.run;
  return {app, [values, flags, options, run, &threads] {
            Values v;
            for (const auto& [name, value] : *values)  // given, or with a default: absent ones stay out
              if (options->at(name)->count() > 0 || !value.empty()) v[name] = value;
            for (const auto& [name, set] : *flags) v[name] = set ? "true" : "false";
            run(v, threads);
          }};
}

std::vector<Command> add_task_commands(CLI::App& parent, const int& threads) {
  auto* data = parent.add_subcommand("data", "Generate a task's data as CSV");
  std::vector<Command> generators, out;
  for (const Task* t : all_tasks()) {
    Tool generator = t->generator();
    generator.name = t->name();  // looplab data NAME
    generators.push_back(add_tool(data, generator, threads));
  }
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
