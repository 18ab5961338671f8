// looplab's one error type for bad input: a message a user can act on (naming the file, line
// and field), turned into one line on stderr and exit code 2 by the command line.
#pragma once

#include <stdexcept>
#include <string>

namespace looplab {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace looplab
