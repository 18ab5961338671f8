// Run-time choices shared by every command: threads, the allocator, device, dtype and precision;
// the timing of benchmarks; `looplab info --system`. The bottom layer with util/ (platform/ also
// holds the CPU features and the BLAS kernel choice).
#pragma once

#include <torch/torch.h>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <chrono>
#include <vector>
#include <string>

namespace looplab {

// Sets LibTorch's intra-op threads (LibTorch starts at 1 on some machines; the command line
// passes distributed/environment.h's default_thread_count() when the user gives none). Returns
// the count in use.
int configure_threads(int threads);

// The C library allocator's trade-off (glibc only; left alone when the user sets
// MALLOC_MMAP_MAX_ or MALLOC_TRIM_THRESHOLD_). kSpeed keeps freed memory in the heap for the
// next allocation (a training step 13% faster: no page faults and page clearing on every
// activation), at the price of fragmentation: peak memory up to ~1.7x what is alive at once
// (measured on the k = 29 recompute step). kFootprint maps every block of 128 KiB or more on
// its own and unmaps it when freed (glibc's starting thresholds, held fixed: once mallopt has
// been called glibc no longer raises them), so the peak is what is alive: what --recompute
// asks for.
enum class AllocatorPolicy { kSpeed, kFootprint };
void configure_allocator(AllocatorPolicy policy);

// Whether this LibTorch is built with CUDA (libtorch_cuda loaded), and its CUDA runtime's version
// ("13.2"; "" when not built). Neither needs a GPU.
bool cuda_built();
std::string cuda_version();

// "cpu", "cuda" or "cuda:N"; throws looplab::Error if CUDA is asked for and absent, saying which:
// a LibTorch built without CUDA, or no device.
torch::Device parse_device(const std::string& name);
// "float32", "float64", "bfloat16", "float16"; throws looplab::Error otherwise.
torch::Dtype parse_dtype(const std::string& name);
std::string dtype_name(torch::Dtype dtype);

// Mixed precision, TrainOptions::precision (run/run_spec.h): "float32", or "bf16-mixed": the
// model's products (linear, matmul, attention) in bfloat16 under LibTorch's autocast over float32
// weights, optimizer state and reductions, as torch.autocast(device, torch.bfloat16) and the
// paper's "BF16 casting". Throws looplab::Error for another name.
bool is_mixed_precision(const std::string& precision);
// Where bf16-mixed is worth running: a CUDA device, or a CPU with AVX512-BF16 (elsewhere
// LibTorch emulates bfloat16 products, slower than float32).
bool bf16_mixed_supported(torch::Device device);
// Autocast to bfloat16 on `device` while alive when `enabled` (else nothing), as Python's
// `with torch.autocast(...)`: restores the previous state and empties autocast's cache of cast
// weights on exit (the weights change between steps).
class AutocastScope {
 public:
  AutocastScope(torch::Device device, bool enabled);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool enabled_;
  c10::DeviceType type_;
  bool was_enabled_ = false;
  at::ScalarType was_dtype_ = at::kBFloat16;
};
// Whether autocast is on for the device type on this thread.
bool autocast_enabled(c10::DeviceType type);

// Timing of benchmarks and of `info --system`.
// Waits for the device's queued work (CUDA); nothing on the CPU.
inline void sync_device(torch::Device device) {
  if (device.is_cuda()) torch::cuda::synchronize();
}

// Seconds of each of `reps` runs of fn after `warmup` untimed runs, sorted.
template <typename F>
std::vector<double> sorted_seconds(int64_t warmup, int64_t reps, F&& fn) {
  for (int64_t i = 0; i < warmup; ++i) fn();
  std::vector<double> t;
  for (int64_t i = 0; i < reps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t;
}

// Median seconds of `reps` runs of fn after one warm-up run.
template <typename F>
double median_seconds(int64_t reps, F&& fn) {
  const std::vector<double> t = sorted_seconds(1, reps, fn);
  return t[t.size() / 2];
}

// The 2048^3 matrix product on a device and dtype: median seconds of `reps` (after one warm-up),
// and the rate in GFLOP/s. The yardstick every benchmark figure is a fraction of.
inline constexpr int64_t kMatmulSize = 2048;
double matmul_seconds(torch::Device device, torch::Dtype dtype, int64_t reps);
double matmul_gflops(torch::Device device, torch::Dtype dtype, int64_t reps);

// `looplab info --system`: LibTorch, threads, oneDNN, CUDA, the CPU and its features, the BLAS
// and its kernel (blas_kernel.h), and the float32 (and bfloat16 with AVX512-BF16) product rates.
nlohmann::json system_info();
std::string system_text(const nlohmann::json& info);

}  // namespace looplab
