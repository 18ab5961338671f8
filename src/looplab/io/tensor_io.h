// LibTorch tensors to and from safetensors records and files.
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>

#include "looplab/io/safetensors.h"

namespace looplab {

torch::Tensor tensor_from_record(const TensorRecord& record);
TensorRecord record_from_tensor(const torch::Tensor& tensor);  // copies to CPU, contiguous

std::map<std::string, torch::Tensor> read_tensors(const std::string& path);
void write_tensors(const std::string& path, const std::map<std::string, torch::Tensor>& tensors,
                   const std::map<std::string, std::string>& metadata = {});

}  // namespace looplab
