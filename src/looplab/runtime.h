// Run-time choices shared by every command: threads, device and dtype.
#pragma once

#include <torch/torch.h>

#include <nlohmann/json.hpp>
#include <string>

namespace looplab {

// Sets LibTorch's intra-op threads: `requested` if positive, else every available core
// (LibTorch starts at 1 on some machines). Returns the count in use.
int configure_threads(int requested);

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

// "cpu", "cuda" or "cuda:N"; throws looplab::Error if CUDA is asked for and absent.
torch::Device parse_device(const std::string& name);
// "float32", "float64", "bfloat16", "float16"; throws looplab::Error otherwise.
torch::Dtype parse_dtype(const std::string& name);
std::string dtype_name(torch::Dtype dtype);

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
