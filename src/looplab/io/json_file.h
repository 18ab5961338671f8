// JSON text and files with errors that name the file: the one parser of looplab's JSON files
// (config.json, training.json, the reports).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "looplab/io/atomic_file.h"
#include "looplab/util/error.h"

namespace looplab {

// `where` names the text in the error, e.g. "DIR/config.json" or "FILE:LINE".
inline nlohmann::json parse_json(const std::string& text, const std::string& where) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(where + ": not valid JSON (" + e.what() + ")");
  }
}

// A missing file is an error naming it (read_file).
inline nlohmann::json read_json_file(const std::string& path) { return parse_json(read_file(path), path); }

}  // namespace looplab
