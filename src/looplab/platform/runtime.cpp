#include "looplab/platform/runtime.h"

#include <ATen/autocast_mode.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>
#include <cstdlib>
#include <thread>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "looplab/platform/blas_kernel.h"
#include "looplab/util/error.h"
#include "looplab/util/list.h"

namespace looplab {

int configure_threads(int threads) {
  torch::set_num_threads(std::max(threads, 1));
  return torch::get_num_threads();
}

void configure_allocator(AllocatorPolicy policy) {
#if defined(__GLIBC__)
  // glibc serves every block above its mmap threshold (at most 32 MiB: a training batch's
  // activations are 30-70 MiB each) with a fresh mapping and unmaps it when freed, so every
  // step paid page faults and the kernel's page clearing again on gigabytes (profile: ~6% of a
  // step in the kernel). PyTorch's CPU tuning guide gets the same gain from jemalloc or
  // tcmalloc, which would be one more dependency. docs/performance.md has the measurements.
  if (std::getenv("MALLOC_MMAP_MAX_") || std::getenv("MALLOC_TRIM_THRESHOLD_")) return;
  if (policy == AllocatorPolicy::kSpeed) {
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);  // give back only free tops above 1 GiB
  } else {
    mallopt(M_MMAP_MAX, 65536);  // glibc's starting values, now fixed (runtime.h)
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    mallopt(M_TRIM_THRESHOLD, 128 * 1024);
  }
#else
  (void)policy;
#endif
}

bool cuda_built() {
  // The CUDA hooks are registered when libtorch_cuda is loaded; the default ones know no runtime.
  return at::detail::getCUDAHooks().hasCUDART();
}

std::string cuda_version() {
  if (!cuda_built()) return "";
  const long v = at::detail::getCUDAHooks().versionCUDART();  // e.g. 13020
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

torch::Device parse_device(const std::string& name) {
  if (name == "cpu") return torch::kCPU;
  if (name == "cuda" || name.rfind("cuda:", 0) == 0) {
    if (!cuda_built())
      throw Error("device '" + name + "' requested, but this looplab's LibTorch " TORCH_VERSION
                  " is built without CUDA (build against a CUDA LibTorch: scripts/setup takes the PyTorch wheel's)");
    if (!torch::cuda::is_available())
      throw Error("device '" + name + "' requested, but no CUDA device is available (LibTorch " TORCH_VERSION
                  " is built with CUDA " + cuda_version() + "; the driver sees no GPU)");
    try {
      return torch::Device(name);
    } catch (const c10::Error&) {
      throw Error("unknown device '" + name + "' (expected cpu, cuda or cuda:N)");
    }
  }
  throw Error("unknown device '" + name + "' (expected cpu, cuda or cuda:N)");
}

namespace {
const std::pair<const char*, torch::Dtype> kDtypes[] = {
    {"float32", torch::kFloat32}, {"float64", torch::kFloat64}, {"bfloat16", torch::kBFloat16}, {"float16", torch::kFloat16}};
}

bool is_mixed_precision(const std::string& precision) {
  if (precision == "float32") return false;
  if (precision == "bf16-mixed") return true;
  throw Error("precision '" + precision + "': expected float32 or bf16-mixed");
}

bool bf16_mixed_supported(torch::Device device) { return device.is_cuda() || cpu_features().avx512_bf16; }

// LibTorch 2.4 made autocast's state per device type; 1.13 has one call per device.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define LOOPLAB_AUTOCAST_BY_TYPE 1
#endif

bool autocast_enabled(c10::DeviceType type) {
#ifdef LOOPLAB_AUTOCAST_BY_TYPE
  return at::autocast::is_autocast_enabled(type);
#else
  return type == c10::DeviceType::CUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
#endif
}

AutocastScope::AutocastScope(torch::Device device, bool enabled) : enabled_(enabled), type_(device.type()) {
  if (!enabled_) return;
  if (type_ != c10::DeviceType::CPU && type_ != c10::DeviceType::CUDA)
    throw Error("bf16-mixed runs on the CPU or CUDA, not on " + device.str());
  was_enabled_ = autocast_enabled(type_);
#ifdef LOOPLAB_AUTOCAST_BY_TYPE
  was_dtype_ = at::autocast::get_autocast_dtype(type_);
  at::autocast::set_autocast_dtype(type_, at::kBFloat16);
  at::autocast::set_autocast_enabled(type_, true);
#else
  if (type_ == c10::DeviceType::CUDA) {
    was_dtype_ = at::autocast::get_autocast_gpu_dtype();
    at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
    at::autocast::set_enabled(true);
  } else {
    was_dtype_ = at::autocast::get_autocast_cpu_dtype();
    at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
    at::autocast::set_cpu_enabled(true);
  }
#endif
}

AutocastScope::~AutocastScope() {
  if (!enabled_) return;
#ifdef LOOPLAB_AUTOCAST_BY_TYPE
  at::autocast::set_autocast_dtype(type_, was_dtype_);
  at::autocast::set_autocast_enabled(type_, was_enabled_);
#else
  if (type_ == c10::DeviceType::CUDA) {
    at::autocast::set_autocast_gpu_dtype(was_dtype_);
    at::autocast::set_enabled(was_enabled_);
  } else {
    at::autocast::set_autocast_cpu_dtype(was_dtype_);
    at::autocast::set_cpu_enabled(was_enabled_);
  }
#endif
  if (!was_enabled_) at::autocast::clear_cache();
}

torch::Dtype parse_dtype(const std::string& name) {
  for (const auto& [n, t] : kDtypes)
    if (name == n) return t;
  throw Error("unknown dtype '" + name + "' (expected float32, float64, bfloat16 or float16)");
}

std::string dtype_name(torch::Dtype dtype) {
  for (const auto& [n, t] : kDtypes)
    if (dtype == t) return n;
  return c10::toString(dtype);
}

double matmul_seconds(torch::Device device, torch::Dtype dtype, int64_t reps) {
  torch::InferenceMode guard;
  const auto opts = torch::TensorOptions().device(device).dtype(dtype);
  const torch::Tensor a = torch::randn({kMatmulSize, kMatmulSize}, opts), b = torch::randn({kMatmulSize, kMatmulSize}, opts);
  return median_seconds(std::max<int64_t>(reps, 1), [&] {
    torch::mm(a, b);
    sync_device(device);
  });
}

double matmul_gflops(torch::Device device, torch::Dtype dtype, int64_t reps) {
  const double n = static_cast<double>(kMatmulSize);
  return 2.0 * n * n * n / matmul_seconds(device, dtype, reps) / 1e9;
}

nlohmann::json system_info() {
  const BlasState blas = blas_state();
  const CpuFeatures cpu = cpu_features();
  nlohmann::json j = {{"libtorch", TORCH_VERSION},
                      {"threads", torch::get_num_threads()},
                      {"onednn", at::hasMKLDNN()},
                      {"cuda", torch::cuda::is_available()},
                      {"cuda_built", cuda_built()},
                      {"cuda_version", cuda_version()},
                      {"cuda_devices", torch::cuda::device_count()},
                      {"cpu", cpu.model},
                      {"cpu_features", feature_names(cpu)},
                      {"blas", blas.library},
                      {"mkl", mkl_version()},
                      {"blas_kernel", blas.kernel},
                      {"blas_kernel_source", blas.source},
                      {"blas_kernel_detected", blas.detected},
                      {"blas_check", blas.check}};
  j["matmul_gflops_float32"] = matmul_gflops(torch::kCPU, torch::kFloat32, 3);
  if (cpu.avx512_bf16) j["matmul_gflops_bfloat16"] = matmul_gflops(torch::kCPU, torch::kBFloat16, 3);
  return j;
}

std::string system_text(const nlohmann::json& j) {
  auto str = [&](const char* key) { return j[key].get<std::string>(); };
  const std::string features = join(j["cpu_features"].get<std::vector<std::string>>(), " ");
  std::string out = "LibTorch   " + str("libtorch") + ", " + std::to_string(j["threads"].get<int>()) + " thread(s), oneDNN " +
                    (j["onednn"].get<bool>() ? "yes" : "no") + "\n" +
                    "CUDA       built: " + (j["cuda_built"].get<bool>() ? "yes (" + str("cuda_version") + ")" : std::string("no")) +
                    ", available: " + (j["cuda"].get<bool>() ? "yes (" + std::to_string(j["cuda_devices"].get<int>()) + " device(s))" : std::string("no")) + "\n" +
                    "CPU        " + str("cpu") + ": " + features + "\n";
  if (str("blas").empty()) {
    out += "BLAS       " + (str("mkl").empty() ? std::string("not OpenBLAS (its kernels are its own)") : str("mkl")) + "\n";
  } else {
    out += "BLAS       " + str("blas") + "\nkernel     " + str("blas_kernel") + " (chosen by " + str("blas_kernel_source");
    if (!str("blas_kernel_detected").empty()) out += " over OpenBLAS's " + str("blas_kernel_detected");
    if (!str("blas_check").empty()) out += "; self-check " + str("blas_check");
    out += ")\n";
  }
  char buf[128];
  std::snprintf(buf, sizeof buf, "matmul     2048^3 float32 %.1f GFLOP/s", j["matmul_gflops_float32"].get<double>());
  out += buf;
  if (j.contains("matmul_gflops_bfloat16")) {
    std::snprintf(buf, sizeof buf, ", bfloat16 %.1f GFLOP/s", j["matmul_gflops_bfloat16"].get<double>());
    out += buf;
  }
  out += "\n";
  if (j.contains("bf16_mixed")) out += "bf16-mixed " + str("bf16_mixed") + "\n";
  return out;
}

}  // namespace looplab
