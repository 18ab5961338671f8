// Run-time choices shared by every command: threads, device and dtype.
#pragma once

#include <torch/torch.h>

#include <string>

namespace looplab {

// Sets LibTorch's intra-op threads: `requested` if positive, else every available core
// (LibTorch starts at 1 on some machines). Returns the count in use.
int configure_threads(int requested);

// Keeps freed memory in the process's heap instead of handing large blocks back to the kernel
// (glibc only; skipped when the user sets MALLOC_MMAP_MAX_ or MALLOC_TRIM_THRESHOLD_).
void configure_allocator();

// "cpu", "cuda" or "cuda:N"; throws looplab::Error if CUDA is asked for and absent.
torch::Device parse_device(const std::string& name);
// "float32", "float64", "bfloat16", "float16"; throws looplab::Error otherwise.
torch::Dtype parse_dtype(const std::string& name);
std::string dtype_name(torch::Dtype dtype);

}  // namespace looplab
