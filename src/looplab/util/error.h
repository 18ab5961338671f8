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

// A bad value of a named option of the library (a training option, a tool's parameter). The
// library names the option as it is called in code and JSON ("max_iters"); the command line
// names the flag instead ("--max-iters"). `rest` follows the name, e.g. " must be >= 1" or
// ": character 3 is 'z'".
class OptionError : public Error {
 public:
  OptionError(const std::string& option, const std::string& rest)
      : Error(option + rest), option_(option), rest_(rest) {}
  const std::string& option() const { return option_; }
  const std::string& rest() const { return rest_; }
  // The message with the option as its command-line flag: "--training-iters must be >= 1".
  std::string as_flag() const {
    std::string flag = "--" + option_;
    for (char& c : flag)
      if (c == '_') c = '-';
    return flag + rest_;
  }

 private:
  std::string option_, rest_;
};

}  // namespace looplab
