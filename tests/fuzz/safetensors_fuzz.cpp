// safetensors headers and tensors: any bytes are a file or a looplab::Error, never a crash.
#include <string_view>

#include "looplab/io/safetensors.h"
#include "looplab/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto tensors = looplab::decode_safetensors(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
    (void)looplab::encode_safetensors(tensors);  // what was read can be written again
  } catch (const looplab::Error&) {
  }
  return 0;
}
