// looplab explore list | looplab explore NAME [--set PARAM=VALUE ...] [--json]: runs one of the
// chapter 7 illustrations and prints it as text or as JSON. No model involved.
#include "looplab/cli/commands.h"

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "looplab/explore/explore.h"

namespace looplab::cli {

namespace {

Command add_list(CLI::App* parent) {
  auto* app = parent->add_subcommand("list", "List the illustrations and their parameters");
  auto json_out = std::make_shared<bool>(false);
  app->add_flag("--json", *json_out, "print the list as JSON");
  return {app, [json_out] { std::cout << (*json_out ? explore::list().dump(2) + "\n" : explore::list_text()); }};
}

Command add_one(CLI::App* parent, const explore::Illustration& ill) {
  auto* app = parent->add_subcommand(ill.name, ill.title);
  struct Options {
    std::vector<std::string> set;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  app->add_option("--set", o->set, "PARAM=VALUE (repeatable); see `looplab explore list`");
  app->add_flag("--json", o->json, "print everything as JSON (parameters, readouts, plot data, text)");
  const std::string name = ill.name;
  return {app, [o, name] {
            const nlohmann::json j = explore::run(name, explore::parse_settings(o->set));
            std::cout << (o->json ? j.dump(2) + "\n" : explore::to_text(j));
          }};
}

}  // namespace

Command add_explore(CLI::App& parent) {
  auto* app = parent.add_subcommand("explore", "The chapter 7 recurrence illustrations: list, or run one by name");
  std::vector<Command> subcommands = {add_list(app)};
  for (const auto& ill : explore::registry()) subcommands.push_back(add_one(app, ill));
  // A missing or mistyped name is answered by main's parse errors with the list of names.
  return command_group(app, subcommands);
}

}  // namespace looplab::cli
