// Shared by the libFuzzer targets (tests/fuzz/README.md): an input written to a file of this
// process, for the readers that take a path.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace looplab::fuzz {

inline std::string write_input(const uint8_t* data, size_t size, const std::string& suffix) {
  const std::string path = "/tmp/looplab-fuzz-" + std::to_string(::getpid()) + suffix;
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  return path;
}

}  // namespace looplab::fuzz
