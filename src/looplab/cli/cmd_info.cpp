// looplab info: a model's architecture and its exact parameter count.
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench/bench.h"
#include "looplab/blas_kernel.h"
#include "looplab/cli/commands.h"
#include "looplab/model/looped_transformer.h"
#include "looplab/runtime.h"

namespace looplab::cli {

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

// looplab info --system: what runs the products, and how fast they are here.
nlohmann::json system_info() {
  const BlasState blas = blas_state();
  const CpuFeatures cpu = cpu_features();
  nlohmann::json j = {{"libtorch", TORCH_VERSION},
                      {"threads", torch::get_num_threads()},
                      {"onednn", at::hasMKLDNN()},
                      {"cuda", torch::cuda::is_available()},
                      {"cpu", cpu.model},
                      {"cpu_features", feature_names(cpu)},
                      {"blas", blas.library},
                      {"blas_kernel", blas.kernel},
                      {"blas_kernel_source", blas.source},
                      {"blas_kernel_detected", blas.detected},
                      {"blas_check", blas.check}};
  j["matmul_gflops_float32"] = bench::matmul_gflops(torch::kCPU, torch::kFloat32, 3);
  if (cpu.avx512_bf16) j["matmul_gflops_bfloat16"] = bench::matmul_gflops(torch::kCPU, torch::kBFloat16, 3);
  return j;
}

void print_system(const nlohmann::json& j) {
  std::printf("LibTorch   %s, %d thread(s), oneDNN %s, CUDA %s\n", j["libtorch"].get<std::string>().c_str(),
              j["threads"].get<int>(), j["onednn"].get<bool>() ? "yes" : "no", j["cuda"].get<bool>() ? "yes" : "no");
  std::string features;
  for (const auto& f : j["cpu_features"]) features += (features.empty() ? "" : " ") + f.get<std::string>();
  std::printf("CPU        %s: %s\n", j["cpu"].get<std::string>().c_str(), features.c_str());
  if (j["blas"].get<std::string>().empty()) {
    std::printf("BLAS       not OpenBLAS (its kernels are its own)\n");
  } else {
    std::printf("BLAS       %s\nkernel     %s (chosen by %s", j["blas"].get<std::string>().c_str(),
                j["blas_kernel"].get<std::string>().c_str(), j["blas_kernel_source"].get<std::string>().c_str());
    if (!j["blas_kernel_detected"].get<std::string>().empty())
      std::printf(" over OpenBLAS's %s", j["blas_kernel_detected"].get<std::string>().c_str());
    if (!j["blas_check"].get<std::string>().empty()) std::printf("; self-check %s", j["blas_check"].get<std::string>().c_str());
    std::printf(")\n");
  }
  std::printf("matmul     2048^3 float32 %.1f GFLOP/s", j["matmul_gflops_float32"].get<double>());
  if (j.contains("matmul_gflops_bfloat16")) std::printf(", bfloat16 %.1f GFLOP/s", j["matmul_gflops_bfloat16"].get<double>());
  std::printf("\n");
}

}  // namespace

Command add_info(CLI::App& parent) {
  auto* app = parent.add_subcommand("info", "Show a model's architecture and exact parameter count");
  auto opts = std::make_shared<ModelOptions>();
  auto json_out = std::make_shared<bool>(false), system = std::make_shared<bool>(false);
  add_model_options(app, *opts);
  app->add_flag("--json", *json_out, "print JSON");
  app->add_flag("--system", *system, "this machine instead: LibTorch, BLAS and its kernel, CPU features, product rates");
  return {app, [opts, json_out, system] {
            if (*system) {
              const nlohmann::json j = system_info();
              if (*json_out) std::cout << j.dump(2) << "\n"; else print_system(j);
              return;
            }
            const ModelConfig c = model_config(*opts);
            LoopedTransformer model(c);  // counted from the real modules, not the formula
            const int64_t total = count(*model);
            nlohmann::json breakdown = {{"projection", count(*model->projection)},
                                        {"recur_blocks", count(*model->recur_blocks)},
                                        {"head", count(*model->head)}};
            if (*json_out) {
              nlohmann::json j = {{"config", to_json(c)}, {"parameters", total}, {"breakdown", breakdown}};
              std::cout << j.dump(2) << "\n";
              return;
            }
            std::cout << describe(c)
                      << "parameters  " << with_commas(total) << "\n";
            for (const auto& [name, n] : breakdown.items())
              std::cout << "  " << std::left << std::setw(14) << name << std::right << std::setw(12)
                        << with_commas(n.get<int64_t>()) << "\n";
            std::cout << "runtime     LibTorch " << TORCH_VERSION << ", " << torch::get_num_threads() << " thread(s), CUDA "
                      << (torch::cuda::is_available() ? "available" : "not available") << "\n";
          }};
}

}  // namespace looplab::cli
