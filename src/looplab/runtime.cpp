#include "looplab/runtime.h"

#include <cstdlib>
#include <thread>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "looplab/util/error.h"

namespace looplab {

int configure_threads(int requested) {
  int n = requested > 0 ? requested : static_cast<int>(std::thread::hardware_concurrency());
  if (n <= 0) n = 1;
  torch::set_num_threads(n);
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

torch::Device parse_device(const std::string& name) {
  if (name == "cpu") return torch::kCPU;
  if (name == "cuda" || name.rfind("cuda:", 0) == 0) {
    if (!torch::cuda::is_available())
      throw Error("device '" + name + "' requested but this LibTorch build sees no CUDA device");
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

}  // namespace looplab
