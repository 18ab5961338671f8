// The eight recurrence illustrations of chapter 7 (seed 001, SPEC section 5) as a torch-free
// engine: each takes its slider values and returns everything the page shows, recomputed, as
// JSON (parameters, readouts, the two plots' data, the worked calculation, equations, symbols,
// conditions, the predict-first and check-your-understanding questions).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace looplab::explore {

// Slider values as given on the command line (--set NAME=VALUE): name -> text.
using Settings = std::map<std::string, std::string>;

struct Illustration {
  std::string name;   // memory-decay, jacobian-products, ...
  std::string title;  // one line
  std::function<nlohmann::json(const Settings&)> compute;  // throws looplab::Error on bad settings
};

// All registered illustrations, in the seed's order.
const std::vector<Illustration>& registry();

// Runs one illustration; an unknown name, unknown parameter or out-of-range value throws
// looplab::Error.
nlohmann::json run(const std::string& name, const Settings& settings = {});

// Parses "NAME=VALUE" (for --set); throws looplab::Error when there is no '='.
std::pair<std::string, std::string> parse_setting(const std::string& text);
// Parses each of `texts`; a parameter given twice is a looplab::Error.
Settings parse_settings(const std::vector<std::string>& texts);

// A plain-text rendering of an illustration's JSON.
std::string to_text(const nlohmann::json& j);

// Every illustration's name, title and parameters (`looplab explore list --json`), and the same
// as text, two lines each.
nlohmann::json list();
std::string list_text();

}  // namespace looplab::explore
