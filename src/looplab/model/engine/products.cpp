#include "looplab/model/engine/products.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "looplab/model/engine/row_math.h"

#ifdef LOOPLAB_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

// MKL's mixed-precision product, as the PyTorch wheel's libtorch_cpu exports it (the MKL that
// ATen itself calls; LP64 interface, CBLAS enums passed as ints). Declared here rather than from
// mkl.h, which the wheel does not ship; weak, so that a LibTorch without MKL (Debian's) links and
// the pointer is null there.
extern "C" void cblas_gemm_bf16bf16f32(int layout, int transa, int transb, int m, int n, int k, float alpha,
                                       const uint16_t* a, int lda, const uint16_t* b, int ldb, float beta, float* c,
                                       int ldc) __attribute__((weak));

namespace looplab::engine {

void widen_rows(const uint16_t* P, int64_t m, int64_t n, const float* bias, float* C);

namespace {

#ifdef LOOPLAB_HAVE_DNNL
// LOOPLAB_DNNL=off sends the products to ATen's BLAS instead (OpenBLAS with Debian's LibTorch,
// MKL inside the PyTorch wheel's): for measuring the one against the other in one build.
bool use_dnnl() {
  static const bool on = [] {
    const char* e = std::getenv("LOOPLAB_DNNL");
    return !(e && std::strcmp(e, "off") == 0);
  }();
  return on;
}
#endif

constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;  // CBLAS's enum values

// C [m, n] (+)= op(A) op(B) in bfloat16 with float32 accumulation, C float32 row-major; beta 1
// adds to C (the bias copied in beforehand). False where no bfloat16 GEMM library is linked.
bool gemm_bf16(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const uint16_t* A, int64_t lda, const uint16_t* B,
               int64_t ldb, float beta, float* C, int64_t ldc) {
  if (cblas_gemm_bf16bf16f32) {
    cblas_gemm_bf16bf16f32(kRowMajor, ta ? kTrans : kNoTrans, tb ? kTrans : kNoTrans, static_cast<int>(m),
                           static_cast<int>(n), static_cast<int>(k), 1.0f, A, static_cast<int>(lda), B,
                           static_cast<int>(ldb), beta, C, static_cast<int>(ldc));
    return true;
  }
#ifdef LOOPLAB_HAVE_DNNL
  if (use_dnnl())
    return dnnl_gemm_bf16bf16f32(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, A, lda, B, ldb, beta, C, ldc) ==
           dnnl_success;
#endif
  return false;
}

const uint16_t* bits(const torch::Tensor& t) { return reinterpret_cast<const uint16_t*>(t.data_ptr<at::BFloat16>()); }

// op(A) op(B) (+ bias on every row), op transposing where asked. A and B both float32/float64,
// or both bfloat16 (float32 out).
torch::Tensor product(const torch::Tensor& A, bool ta, const torch::Tensor& B, bool tb,
                      const torch::Tensor& bias = {}) {
  const int64_t m = A.size(ta ? 1 : 0), k = A.size(ta ? 0 : 1), n = B.size(tb ? 0 : 1);
  if (A.scalar_type() == torch::kBFloat16 && !ta) {
    // x W^T and dy W over the whole batch: ATen's bfloat16 product (the wheel's oneDNN, AMX
    // brgemm: 2.5-3.5x MKL's cblas_gemm_bf16bf16f32 at K = 256 here, docs/performance.md), its
    // bfloat16 output widened to float32 with the bias in one pass. This rounds the output to
    // bfloat16, as autocast does.
    const torch::Tensor out = at::mm(A, tb ? B.t() : B);
    return bias.defined() ? at::add(out, bias) : out.to(torch::kFloat32);
  }
  if (A.scalar_type() == torch::kBFloat16) {
    TORCH_CHECK(B.scalar_type() == torch::kBFloat16, "a bf16-mixed product needs two bfloat16 operands");
    const auto f32 = A.options().dtype(torch::kFloat32);
    torch::Tensor C = bias.defined() ? bias.to(torch::kFloat32).expand({m, n}).contiguous() : torch::empty({m, n}, f32);
    const torch::Tensor a = A.contiguous(), b = B.contiguous();
    if (gemm_bf16(ta, tb, m, n, k, bits(a), ta ? m : k, bits(b), tb ? k : n, bias.defined() ? 1.0f : 0.0f,
                  C.data_ptr<float>(), n))
      return C;
    const torch::Tensor out = at::mm(ta ? a.t() : a, tb ? b.t() : b).to(torch::kFloat32);
    return bias.defined() ? out.add_(C) : out;
  }
#ifdef LOOPLAB_HAVE_DNNL
  if (A.scalar_type() == torch::kFloat32 && use_dnnl()) {
    torch::Tensor C = bias.defined() ? bias.expand({m, n}).contiguous() : torch::empty({m, n}, A.options());
    const torch::Tensor a = A.contiguous(), b = B.contiguous();
    if (dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a.data_ptr<float>(), ta ? m : k,
                   b.data_ptr<float>(), tb ? k : n, bias.defined() ? 1.0f : 0.0f, C.data_ptr<float>(),
                   n) == dnnl_success)
      return C;
  }
#endif
  const torch::Tensor a = ta ? A.t() : A, b = tb ? B.t() : B;
  return bias.defined() ? at::addmm(bias, a, b) : at::mm(a, b);
}

// The bfloat16 copies of weights: by the weight's TensorImpl, with the version they were made
// at and a weak reference that tells a freed weight from a new one at the same address.
struct Bf16Copy {
  c10::weak_intrusive_ptr<c10::TensorImpl> of;
  uint32_t version;
  torch::Tensor copy;
};
std::mutex copies_mutex;
std::unordered_map<const c10::TensorImpl*, Bf16Copy> copies;
std::atomic<int64_t> casts{0};

}  // namespace

torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& W, const torch::Tensor& b) {
  if (x.scalar_type() == torch::kBFloat16) return product(x, false, bf16_weight(W), true, b);
  return product(x, false, W, true, b);
}

torch::Tensor weight_gradient(const torch::Tensor& dy, const torch::Tensor& x) { return product(dy, true, x, false); }

torch::Tensor input_gradient(const torch::Tensor& dy, const torch::Tensor& W) {
  if (dy.scalar_type() == torch::kBFloat16) return product(dy, false, bf16_weight(W), false);
  return product(dy, false, W, false);
}

torch::Tensor bf16_weight(const torch::Tensor& W) {
  const c10::TensorImpl* key = W.unsafeGetTensorImpl();
  // (An inference tensor keeps no version counter; it cannot change outside inference mode.)
  const uint32_t version = W.is_inference() ? 0 : W._version();
  std::lock_guard<std::mutex> lock(copies_mutex);
  auto it = copies.find(key);
  if (it != copies.end() && it->second.version == version && it->second.of.lock().get() == key) return it->second.copy;
  if (it == copies.end())
    for (auto e = copies.begin(); e != copies.end();)  // forget the copies of freed weights
      e = e->second.of.expired() ? copies.erase(e) : std::next(e);
  torch::Tensor copy;
  {
    // An ordinary tensor even when asked for inside inference mode (the progressive loss's n
    // iterations): the copy outlives it.
    c10::InferenceMode ordinary(false);
    torch::NoGradGuard no_grad;
    copy = W.to(torch::kBFloat16).contiguous();
  }
  ++casts;
  auto [entry, inserted] =
      copies.insert_or_assign(key, Bf16Copy{c10::weak_intrusive_ptr<c10::TensorImpl>(W.getIntrusivePtr()), version, copy});
  return entry->second.copy;
}

int64_t bf16_weight_casts() { return casts.load(); }

// C [m, n] = float32 of the bfloat16 rows P (+ bias on every row where given).
LOOPLAB_CLONES void widen_rows(const uint16_t* P, int64_t m, int64_t n, const float* bias, float* C) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const uint32_t u = static_cast<uint32_t>(P[i * n + j]) << 16;
      float v;
      std::memcpy(&v, &u, sizeof v);
      C[i * n + j] = bias ? v + bias[j] : v;
    }
}

LOOPLAB_CLONES void round_to_bf16(const float* x, uint16_t* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, &x[i], sizeof u);
    // Round to nearest, ties to even; NaN stays a (quiet) NaN.
    const uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
    out[i] = (u & 0x7FFFFFFFu) > 0x7F800000u ? static_cast<uint16_t>((u >> 16) | 0x40u) : static_cast<uint16_t>(rounded);
  }
}

std::string bf16_products_library() {
  if (cblas_gemm_bf16bf16f32) return "MKL (cblas_gemm_bf16bf16f32)";
#ifdef LOOPLAB_HAVE_DNNL
  if (use_dnnl()) return "oneDNN (dnnl_gemm_bf16bf16f32)";
#endif
  return "ATen (bfloat16 output, converted)";
}

template <typename T>
void tile_linear(const T* A, int64_t m, const torch::Tensor& W, const torch::Tensor& b, T* C) {
  const int64_t n = W.size(0), k = W.size(1);
  const T* bias = b.defined() ? b.data_ptr<T>() : nullptr;
  if (bias)
    for (int64_t i = 0; i < m; ++i) std::memcpy(C + i * n, bias, n * sizeof(T));
#ifdef LOOPLAB_HAVE_DNNL
  if constexpr (std::is_same_v<T, float>) {
    // Inside a parallel region oneDNN (like OpenBLAS) runs on the calling thread alone.
    if (use_dnnl() && dnnl_sgemm('N', 'T', m, n, k, 1.0f, A, k, W.data_ptr<float>(), k, bias ? 1.0f : 0.0f, C, n) == dnnl_success)
      return;
  }
#endif
  const auto options = W.options();
  const torch::Tensor a = torch::from_blob(const_cast<T*>(A), {m, k}, options);
  torch::Tensor c = torch::from_blob(C, {m, n}, options);
  if (bias)
    c.addmm_(a, W.t());
  else
    at::mm_out(c, a, W.t());
}

template void tile_linear<float>(const float*, int64_t, const torch::Tensor&, const torch::Tensor&, float*);
template void tile_linear<double>(const double*, int64_t, const torch::Tensor&, const torch::Tensor&, double*);

void tile_linear_bf16(const uint16_t* A, int64_t m, const torch::Tensor& W16, const torch::Tensor& b, float* C) {
  const int64_t n = W16.size(0), k = W16.size(1);
  const float* bias = b.defined() ? b.data_ptr<float>() : nullptr;
  if (bias)
    for (int64_t i = 0; i < m; ++i) std::memcpy(C + i * n, bias, n * sizeof(float));
  // MKL here, on one thread inside the caller's parallel region: a paper-width iteration on 20 x 512
  // bits took 30 ms so against 53 ms through ATen's bfloat16 product into a buffer (measured
  // alternating, Xeon with AMX, 2026-12-06).
  if (gemm_bf16(false, true, m, n, k, A, k, bits(W16), k, bias ? 1.0f : 0.0f, C, n)) return;
  thread_local std::vector<at::BFloat16> out16;
  if (out16.size() < static_cast<size_t>(m * n)) out16.resize(m * n);
  {
    const torch::Tensor a = torch::from_blob(const_cast<uint16_t*>(A), {m, k}, torch::TensorOptions().dtype(torch::kBFloat16));
    torch::Tensor o = torch::from_blob(out16.data(), {m, n}, torch::TensorOptions().dtype(torch::kBFloat16));
    at::mm_out(o, a, W16.t());
  }
  widen_rows(reinterpret_cast<const uint16_t*>(out16.data()), m, n, bias, C);
  const torch::Tensor a =
      torch::from_blob(const_cast<uint16_t*>(A), {m, k}, torch::TensorOptions().dtype(torch::kBFloat16));
  torch::Tensor c = torch::from_blob(C, {m, n}, torch::TensorOptions().dtype(torch::kFloat32));
  const torch::Tensor out = at::mm(a, W16.t()).to(torch::kFloat32);
  if (bias)
    c.add_(out);
  else
    c.copy_(out);
}

}  // namespace looplab::engine
