// A model folder (a run folder's model: run/run_folder.h names its files): config.json (every
// hyper-parameter) and model.safetensors (the weights under the paper's reference state-dict
// names). Each file is written atomically. LibTorch; the rest of run/ but stages is torch-free.
#pragma once

#include <optional>
#include <string>

#include "looplab/model/looped_transformer.h"
#include "looplab/run/run_folder.h"

namespace looplab {

// Writes dir/config.json and dir/<weights_file>, creating dir if needed.
void save_model(const std::string& dir, LoopedTransformerImpl& model, const std::string& weights_file = RunFolder::kWeights);

// `looplab init`: a model of configuration c freshly initialized from `seed` (PyTorch's default
// initialization, as the paper's code), saved to dir. A model already in dir is an Error unless
// `overwrite`.
void init_model(const std::string& dir, const ModelConfig& c, uint64_t seed, bool overwrite);

// Copies weights from a safetensors file into the model. Strict: a missing tensor, an
// unexpected name or a wrong shape is a looplab::Error naming the file and tensor.
void load_weights(LoopedTransformerImpl& model, const std::string& path);

// Builds the model of dir/config.json, loads dir/<weights_file>, moves it to device/dtype.
// A version-1 config (model/config.h) is converted where that is exact: a prefix-sums model
// that took the bit gets projection.bias + 0.5 projection.weight, so that it computes the same on
// bit - 0.5; a version-1 chess model (rank 1 in row 0: its RoPE positions differ) is an Error
// that says to retrain it.
LoopedTransformer load_model(const std::string& dir, torch::Device device = torch::kCPU,
                             std::optional<torch::Dtype> dtype = std::nullopt,
                             const std::string& weights_file = RunFolder::kWeights);

}  // namespace looplab
