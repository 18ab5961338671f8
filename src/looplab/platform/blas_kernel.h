// The right BLAS kernel for this CPU. OpenBLAS picks its kernels once, when it is loaded, from
// its own CPU detection or from OPENBLAS_CORETYPE; OpenBLAS 0.3.21 (Debian) does not recognise
// some newer CPUs and falls back to its generic SSE3 kernels, 3-7x slower (issue 17). looplab
// therefore checks, first thing in main, which kernel OpenBLAS runs; if it is older than the
// CPU supports and nobody set OPENBLAS_CORETYPE, it re-executes itself with the best kernel the
// CPU supports, checks a few products of that kernel against a plain loop, and goes back to
// OpenBLAS's own choice if the check fails. A value the user or the machine has set is never
// overridden. Another BLAS (MKL in a PyTorch wheel) is left alone. No LibTorch here.
#pragma once

#include <string>
#include <vector>

#include "looplab/platform/cpu_features.h"

namespace looplab {

// OPENBLAS_CORETYPE values the CPU can run, best first (e.g. {"Cooperlake", "SkylakeX",
// "Haswell"}); empty when the CPU has no AVX2.
std::vector<std::string> kernel_candidates(const CpuFeatures& f);
// Whether OpenBLAS's kernel `core` is older than the best the CPU supports (a generic fallback
// such as Prescott on an AVX2 or AVX-512 CPU). Case-insensitive.
bool is_fallback(const std::string& core, const CpuFeatures& f);

struct BlasState {
  std::string library;   // "OpenBLAS 0.3.21 ..." (openblas_get_config), or "" when not OpenBLAS
  std::string kernel;    // the kernel in use (openblas_get_corename)
  std::string source;    // "OpenBLAS's detection", "OPENBLAS_CORETYPE (set outside looplab)" or "looplab"
  std::string detected;  // OpenBLAS's own choice, when looplab replaced it
  std::string check;     // looplab's self-check of its choice: "passed", or why it failed
};
BlasState blas_state();

// "Intel(R) oneAPI Math Kernel Library Version 2024.2-Product Build ..." where the process has
// MKL (the PyTorch wheel's LibTorch carries it inside libtorch_cpu), else "".
std::string mkl_version();

// Called first in main with main's argv: may re-execute the program (and not return). Does
// nothing when LOOPLAB_BLAS=off is set.
void choose_blas_kernel(char** argv);

// A few single-precision products of the BLAS in use (cblas_sgemm, plain and transposed, with
// alpha and beta) against a plain loop in double; "" when they agree, else what differed.
std::string blas_self_check();

}  // namespace looplab
