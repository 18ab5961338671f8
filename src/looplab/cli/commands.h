// The subcommands of `looplab`. Each add_* registers its options on the parent app and
// returns the function that runs it once parsing succeeded. Commands are thin: they map flags
// to the library's options, call the library, print.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

#include "looplab/model/config.h"
#include "looplab/tasks/task.h"
#include "looplab/util/error.h"
#include "looplab/util/options.h"
#include "looplab/cli/suggest.h"  // checked, task_name, recall_name, norm_name

namespace looplab::cli {

struct Command {
  CLI::App* app;
  std::function<void()> run;  // throws looplab::Error on bad input
};

Command add_info(CLI::App& parent);
Command add_init(CLI::App& parent);
Command add_forward(CLI::App& parent);
Command add_train(CLI::App& parent);
Command add_eval(CLI::App& parent);
Command add_demo(CLI::App& parent);
Command add_solve(CLI::App& parent);
Command add_bench(CLI::App& parent, const int& threads);
Command add_explore(CLI::App& parent);
Command add_analyze(CLI::App& parent);
Command add_serve(CLI::App& parent);
Command add_sweep(CLI::App& parent);
// `looplab data TASK` and each task's own commands (`looplab TASK TOOL`), from the registry.
std::vector<Command> add_task_commands(CLI::App& parent, const int& threads);
void add_geometry_commands(CLI::App* analyze, std::vector<Command>& out);
// A task's command (tasks/task.h) as a subcommand of `parent`.
Command add_tool(CLI::App* parent, const Tool& tool, const int& threads);

// The options of a model (model/config.h's ModelShape), shared by info and init.
void add_model_options(CLI::App* app, ModelShape& o);
// --task, --recall and --norm with their help and checks (info, init, train, bench block).
void add_architecture_options(CLI::App* app, std::string& task, std::string& recall, std::string& norm);


// One flag per option of `table` that is a flag (util/options.h), with its help and, where
// `defaults` is given, its default; each value given goes to `given` in the order typed.
template <typename S>
void add_option_flags(CLI::App* app, const OptionTable<S>& table,
                      std::function<void(const Option<S>&, const OptionValue&)> given, const S* defaults = nullptr) {
  for (const Option<S>& o : table) {
    if (!o.is_flag) continue;
    const std::string names = "--" + o.key + (o.old_key.empty() ? "" : ",--" + o.old_key);
    // A value the table refuses ("5:3" for --iters) is a parse error naming the flag.
    auto to = [given, o](OptionValue v) {
      try {
        given(o, v);
      } catch (const OptionError& e) {
        throw CLI::ValidationError(e.as_flag());
      } catch (const Error& e) {
        throw CLI::ValidationError("--" + o.key + ": " + e.what());
      }
    };
    CLI::Option* flag = nullptr;
    switch (o.kind) {
      case OptionKind::kInt: flag = app->add_option_function<int64_t>(names, [to](const int64_t& v) { to(v); }, o.help); break;
      case OptionKind::kUnsigned:
        flag = app->add_option_function<uint64_t>(names, [to](const uint64_t& v) { to(v); }, o.help);
        break;
      case OptionKind::kNumber: flag = app->add_option_function<double>(names, [to](const double& v) { to(v); }, o.help); break;
      case OptionKind::kFlag: flag = app->add_flag_function(names, [to](int64_t n) { to(n > 0); }, o.help); break;  // --f=false: -1
      case OptionKind::kText:
      case OptionKind::kList:  // "val,hard": the setter splits it
        flag = app->add_option_function<std::string>(names, [to](const std::string& v) { to(v); }, o.help);
        break;
    }
    if (defaults && o.kind != OptionKind::kFlag)
      if (std::string d = to_text(o.get(*defaults)); !d.empty()) flag->default_str(d);
  }
}

// A command made of subcommands (looplab data, bench): it runs whichever was parsed.
inline Command command_group(CLI::App* app, std::vector<Command> subcommands) {
  app->require_subcommand(1);
  return {app, [subcommands] {
            for (const Command& c : subcommands)
              if (c.app->parsed()) c.run();
          }};
}

// The first task of the registry: the default of --task.
std::string default_task();

}  // namespace looplab::cli
