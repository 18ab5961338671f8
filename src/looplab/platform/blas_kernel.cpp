#include "looplab/platform/blas_kernel.h"

#include <dlfcn.h>
#include <strings.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>

namespace looplab {

namespace {

// The variables of the re-execution (see choose_blas_kernel).
constexpr const char* kCoreType = "OPENBLAS_CORETYPE";
constexpr const char* kChosen = "LOOPLAB_BLAS_KERNEL";     // the kernel looplab set
constexpr const char* kDetected = "LOOPLAB_BLAS_DETECTED"; // what OpenBLAS had chosen itself
constexpr const char* kCheck = "LOOPLAB_BLAS_CHECK";       // "passed" or "failed: ..."

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

bool same(const std::string& a, const std::string& b) { return strcasecmp(a.c_str(), b.c_str()) == 0; }

// A BLAS's string without its trailing blanks ("" for none).
std::string trimmed(const char* s) {
  std::string out = s ? s : "";
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// OpenBLAS's own functions, looked up at run time: another BLAS may be linked instead.
std::string openblas_string(const char* symbol) {
  using Fn = char* (*)();
  const auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, symbol));
  return trimmed(fn ? fn() : nullptr);
}

// Re-executes this program with the environment as it now is; returns only if that fails.
void reexec(char** argv) { execv("/proc/self/exe", argv); }

}  // namespace

std::vector<std::string> kernel_candidates(const CpuFeatures& f) {
  std::vector<std::string> out;
  if (f.avx512f && f.avx512bw && f.avx512vl) {
    if (f.avx512_bf16) out.push_back("Cooperlake");
    out.push_back("SkylakeX");
  }
  if (f.avx2 && f.fma) out.push_back("Haswell");
  return out;
}

bool is_fallback(const std::string& core, const CpuFeatures& f) {
  std::vector<std::string> good;
  if (f.avx512f && f.avx512bw && f.avx512vl)
    good = {"SkylakeX", "Cooperlake", "SapphireRapids"};
  else if (f.avx2 && f.fma)
    good = {"Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids"};
  else
    return false;  // nothing better to offer
  for (const std::string& g : good)
    if (same(core, g)) return false;
  return true;
}

std::string mkl_version() {
  using Fn = void (*)(char*, int);
  const auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "MKL_Get_Version_String"));
  if (!fn) return "";
  char buf[256] = {};
  fn(buf, sizeof buf - 1);
  return trimmed(buf);
}

BlasState blas_state() {
  BlasState s;
  s.library = openblas_string("openblas_get_config");
  if (s.library.empty()) return s;
  s.kernel = openblas_string("openblas_get_corename");
  const std::string set = env(kCoreType), chosen = env(kChosen);
  s.source = set.empty() ? "OpenBLAS's detection" : same(set, chosen) ? "looplab" : "OPENBLAS_CORETYPE (set outside looplab)";
  s.detected = env(kDetected);
  s.check = env(kCheck);
  return s;
}

std::string blas_self_check() {
  using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
  const auto sgemm = reinterpret_cast<Sgemm>(dlsym(RTLD_DEFAULT, "cblas_sgemm"));
  if (!sgemm) return "cblas_sgemm not found";
  constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  struct Shape {
    int m, n, k;
    bool ta, tb;
  };
  for (const Shape& sh : {Shape{37, 53, 29, false, false}, Shape{128, 96, 200, false, true}, Shape{1, 300, 7, true, false},
                          Shape{64, 64, 64, true, true}}) {
    std::vector<float> A(sh.m * sh.k), B(sh.k * sh.n), C(sh.m * sh.n);
    for (float& x : A) x = u(rng);
    for (float& x : B) x = u(rng);
    for (float& x : C) x = u(rng);
    std::vector<float> C0 = C;
    const float alpha = 0.75f, beta = -0.5f;
    const int lda = sh.ta ? sh.m : sh.k, ldb = sh.tb ? sh.k : sh.n;
    sgemm(kRowMajor, sh.ta ? kTrans : kNoTrans, sh.tb ? kTrans : kNoTrans, sh.m, sh.n, sh.k, alpha, A.data(), lda,
          B.data(), ldb, beta, C.data(), sh.n);
    for (int i = 0; i < sh.m; ++i)
      for (int j = 0; j < sh.n; ++j) {
        double ref = 0, scale = 0;
        for (int p = 0; p < sh.k; ++p) {
          const double a = sh.ta ? A[p * sh.m + i] : A[i * sh.k + p], b = sh.tb ? B[j * sh.k + p] : B[p * sh.n + j];
          ref += a * b;
          scale += std::abs(a * b);
        }
        ref = alpha * ref + beta * C0[i * sh.n + j];
        if (!(std::abs(C[i * sh.n + j] - ref) <= 1e-5 * (scale + 1)))
          return "sgemm " + std::to_string(sh.m) + "x" + std::to_string(sh.n) + "x" + std::to_string(sh.k) +
                 " differs from a plain loop at (" + std::to_string(i) + ", " + std::to_string(j) + ")";
      }
  }
  return "";
}

void choose_blas_kernel(char** argv) {
  if (env("LOOPLAB_BLAS") == "off") return;
  const std::string core = openblas_string("openblas_get_corename");
  if (core.empty()) return;  // not OpenBLAS
  const std::string set = env(kCoreType), chosen = env(kChosen);
  if (!set.empty() && !same(set, chosen)) return;  // the user's or the machine's: never overridden
  const CpuFeatures f = cpu_features();
  const std::vector<std::string> candidates = kernel_candidates(f);
  if (set.empty()) {
    if (!env(kCheck).empty() || !is_fallback(core, f) || candidates.empty()) return;  // fine, or tried already
    setenv(kDetected, core.c_str(), 1);
    setenv(kCoreType, candidates.front().c_str(), 1);
    setenv(kChosen, candidates.front().c_str(), 1);
    reexec(argv);
    unsetenv(kCoreType), unsetenv(kChosen);  // execv failed: run as we are
    return;
  }
  // Running with looplab's choice: OpenBLAS must have taken it, and its products must be right.
  std::string why = same(core, set) ? blas_self_check() : "OpenBLAS runs " + core + " instead";
  if (why.empty()) {
    setenv(kCheck, "passed", 1);
    return;
  }
  // The next candidate, or OpenBLAS's own choice when none is left.
  size_t i = 0;
  while (i < candidates.size() && !same(candidates[i], set)) ++i;
  if (i + 1 < candidates.size()) {
    setenv(kCoreType, candidates[i + 1].c_str(), 1);
    setenv(kChosen, candidates[i + 1].c_str(), 1);
  } else {
    unsetenv(kCoreType), unsetenv(kChosen);
    setenv(kCheck, ("failed: " + set + ": " + why).c_str(), 1);
  }
  reexec(argv);
}

}  // namespace looplab
