#include "looplab/model/summary.h"

#include <iomanip>
#include <sstream>

#include "looplab/model/engine/engine.h"
#include "looplab/model/looped_transformer.h"

namespace looplab {

namespace {

std::string with_commas(int64_t n) {
  std::string s = std::to_string(n), out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i > 0 && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  return out;
}

int64_t count(const torch::nn::Module& m) {
  int64_t n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

}  // namespace

nlohmann::json model_summary(const ModelConfig& c) {
  LoopedTransformer model(c);
  return {{"config", to_json(c)},
          {"parameters", count(*model)},
          {"breakdown",
           {{"projection", count(*model->projection)},
            {"recur_blocks", count(*model->recur_blocks)},
            {"head", count(*model->head)}}},
          {"engine", engine_for(c).describe()}};
}

std::string model_summary_text(const ModelConfig& c) {
  const nlohmann::json j = model_summary(c);
  std::ostringstream out;
  out << describe(c) << "parameters  " << with_commas(j["parameters"].get<int64_t>()) << "\n";
  for (const auto& [name, n] : j["breakdown"].items())
    out << "  " << std::left << std::setw(14) << name << std::right << std::setw(12) << with_commas(n.get<int64_t>())
        << "\n";
  out << "runtime     LibTorch " << TORCH_VERSION << ", " << torch::get_num_threads() << " thread(s), CUDA "
      << (torch::cuda::is_available() ? "available" : "not available") << "\n";
  out << "engine      " << j["engine"].get<std::string>() << " on the CPU in float32; "
      << engine_for(c, "cpu", "float32", "bf16-mixed").describe() << " under bf16-mixed\n";
  return out.str();
}

}  // namespace looplab
