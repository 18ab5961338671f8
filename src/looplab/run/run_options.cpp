#include "looplab/run/run_options.h"

namespace looplab {

const OptionTable<RunSpec>& run_options() {
  static const OptionTable<RunSpec> options = [] {
    OptionTable<RunSpec> out;
    auto add = [&out](OptionTable<RunSpec> part) {
      for (RunOption& o : part)
        if (o.is_flag) out.push_back(std::move(o));
    };
    add(lift(train_option_table(), &RunSpec::train));
    // The model's sizes (config.json is ModelConfig's own file, model/config.h).
    add({option_at<RunSpec>("width", [](RunSpec& s) -> int64_t& { return s.model.width; }, "model width"),
         option_at<RunSpec>("heads", [](RunSpec& s) -> int64_t& { return s.model.heads; }, "attention heads"),
         option_at<RunSpec>("halt-head", [](RunSpec& s) -> bool& { return s.model.halt_head; },
                            "add a halting head, trained to predict whether the current answer is exactly right "
                            "(eval --halt learned)")});
    add(lift(data_option_table(), &RunSpec::data));
    return out;
  }();
  return options;
}

const RunOption* find_run_option(const std::string& name) { return find_option(run_options(), name); }

}  // namespace looplab
