#include "looplab/io/tensor_io.h"

#include <cstring>

#include "looplab/util/error.h"

namespace looplab {

namespace {

struct DtypeName {
  torch::ScalarType type;
  const char* name;
};

// safetensors stores little-endian data, as is every machine LibTorch runs on here.
const DtypeName kDtypes[] = {{torch::kFloat64, "F64"}, {torch::kFloat32, "F32"}, {torch::kFloat16, "F16"},
                             {torch::kBFloat16, "BF16"}, {torch::kInt64, "I64"},  {torch::kInt32, "I32"},
                             {torch::kInt16, "I16"},     {torch::kInt8, "I8"},    {torch::kUInt8, "U8"},
                             {torch::kBool, "BOOL"}};

}  // namespace

torch::Tensor tensor_from_record(const TensorRecord& record) {
  for (const auto& d : kDtypes) {
    if (record.dtype != d.name) continue;
    torch::Tensor t = torch::empty(record.shape, torch::TensorOptions().dtype(d.type));
    if (!record.data.empty()) std::memcpy(t.data_ptr(), record.data.data(), record.data.size());
    return t;
  }
  throw Error("unsupported safetensors dtype '" + record.dtype + "'");
}

TensorRecord record_from_tensor(const torch::Tensor& tensor) {
  const torch::Tensor t = tensor.detach().to(torch::kCPU).contiguous();
  for (const auto& d : kDtypes) {
    if (t.scalar_type() != d.type) continue;
    TensorRecord r;
    r.dtype = d.name;
    r.shape = t.sizes().vec();
    r.data.assign(static_cast<const char*>(t.data_ptr()), t.numel() * t.element_size());
    return r;
  }
  throw Error(std::string("cannot store a tensor of dtype ") + c10::toString(t.scalar_type()) + " in safetensors");
}

std::map<std::string, torch::Tensor> read_tensors(const std::string& path) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& [name, record] : read_safetensors(path)) out.emplace(name, tensor_from_record(record));
  return out;
}

void write_tensors(const std::string& path, const std::map<std::string, torch::Tensor>& tensors,
                   const std::map<std::string, std::string>& metadata) {
  TensorMap records;
  for (const auto& [name, t] : tensors) records.emplace(name, record_from_tensor(t));
  write_safetensors(path, records, metadata);
}

}  // namespace looplab
