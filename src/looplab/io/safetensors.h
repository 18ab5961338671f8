// The safetensors format (Hugging Face): an 8-byte little-endian header length, a JSON header
// naming each tensor's dtype, shape and byte range, then the raw little-endian data. It is how
// weights move between looplab and PyTorch code. Written by hand because no Debian package
// ships a C++ reader; this file is kept free of LibTorch (run/model_folder.h converts).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace looplab {

struct TensorRecord {
  std::string dtype;           // safetensors name: F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL
  std::vector<int64_t> shape;
  std::string data;            // raw little-endian bytes, row-major
};

using TensorMap = std::map<std::string, TensorRecord>;

// Bytes per element of a safetensors dtype; throws looplab::Error for an unknown name.
size_t safetensors_dtype_size(const std::string& dtype);

std::string encode_safetensors(const TensorMap& tensors,
                               const std::map<std::string, std::string>& metadata = {});

// `source` names the file in error messages. Every structural problem (truncation, a header
// that is not JSON, byte ranges that overlap or leave the file, a size that does not match
// the shape) throws looplab::Error.
TensorMap decode_safetensors(std::string_view bytes, const std::string& source,
                             std::map<std::string, std::string>* metadata = nullptr);

TensorMap read_safetensors(const std::string& path,
                           std::map<std::string, std::string>* metadata = nullptr);
void write_safetensors(const std::string& path, const TensorMap& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace looplab
