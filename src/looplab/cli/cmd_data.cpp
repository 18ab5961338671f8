// looplab data: make a task's data from a seed and write it as CSV.
#include <iostream>

#include "looplab/cli/commands.h"
#include "looplab/tasks/prefix_sums/prefix_sums.h"
#include "looplab/util/error.h"

namespace looplab::cli {

Command add_data(CLI::App& parent) {
  auto* app = parent.add_subcommand("data", "Generate a task's data as CSV");
  app->require_subcommand(1);
  auto* prefix = app->add_subcommand("prefix-sums", "Random bit strings and their prefix parities (input,target)");
  struct Options {
    int64_t bits = 32, count = 8000;
    uint64_t seed = 0;
    std::string out;
  };
  auto o = std::make_shared<Options>();
  prefix->add_option("--bits", o->bits, "length of each bit string")->capture_default_str();
  prefix->add_option("--count", o->count, "number of examples")->capture_default_str();
  prefix->add_option("--seed", o->seed, "random seed")->capture_default_str();
  prefix->add_option("--out", o->out, "CSV file to write")->required();
  return {app, [o] {
            if (o->bits < 1 || o->count < 1) throw Error("--bits and --count must be >= 1");
            prefix_sums::write_csv(o->out, prefix_sums::generate(o->bits, o->count, o->seed));
            std::cout << "wrote " << o->count << " examples of " << o->bits << " bits to " << o->out << "\n";
          }};
}

}  // namespace looplab::cli
