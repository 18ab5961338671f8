#include "looplab/model/engine/products.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "looplab/model/engine/row_math.h"

#include <ATen/Parallel.h>
#include <ATen/native/CPUBlas.h>

#ifdef LOOPLAB_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
// oneDNN's mixed-precision GEMM, row-major like dnnl_sgemm: libdnnl exports it (C linkage) but
// Debian's 2.6 header does not declare it.
extern "C" dnnl_status_t dnnl_gemm_bf16bf16f32(char transa, char transb, dnnl_dim_t M, dnnl_dim_t N, dnnl_dim_t K,
                                               float alpha, const uint16_t* A, dnnl_dim_t lda, const uint16_t* B,
                                               dnnl_dim_t ldb, float beta, float* C, dnnl_dim_t ldc);
#endif

// MKL's mixed-precision product, as the PyTorch wheel's libtorch_cpu exports it (the MKL that
// ATen itself calls; LP64 interface, CBLAS enums passed as ints). Declared here rather than from
// mkl.h, which the wheel does not ship; weak, so that a LibTorch without MKL (Debian's) links and
// the pointer is null there.
extern "C" void cblas_gemm_bf16bf16f32(int layout, int transa, int transb, int m, int n, int k, float alpha,
                                       const uint16_t* a, int lda, const uint16_t* b, int ldb, float beta, float* c,
                                       int ldc) __attribute__((weak));

namespace looplab::engine {

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

// ATen's batch-reduce GEMM micro-kernels (where LibTorch's CPUBlas.h defines the macro below):
// C [m, n] (+)= A [m, k] B, B packed by cpublas::pack into panels of at most kPanel columns
// (the micro-kernels' leading dimension for a packed operand is 16, 32, 48 or 64), k pairs of
// rows interleaved. Called on row blocks of kRows, the largest that measured faster (64 rows:
// 1.0-1.1 TFLOP/s at 16,000 x 256 x 768 on 2 AMX cores, 32 rows: 0.4-1.0, 128: 0.4-0.55).
constexpr int64_t kPanel = 64, kRows = 64;

bool use_brgemm() {
#ifdef CPUBLAS_BRGEMM_BF16BF16F32
  static const bool on = [] {
    const char* e = std::getenv("LOOPLAB_BRGEMM");
    if (e && std::strcmp(e, "off") == 0) return false;
    try {
      return at::native::cpublas::could_pack(at::kBFloat16);
    } catch (const std::exception&) {
      return false;
    }
  }();
  return on;
#else
  return false;
#endif
}

// B [k, n] (row-major) packed for the micro-kernels, or an undefined
// tensor where they do not take it (n not a multiple of 16, k odd) or are not here.
torch::Tensor pack_for_brgemm(const torch::Tensor& B16) {
  const int64_t k = B16.size(0), n = B16.size(1);
  if (!use_brgemm() || n % 16 != 0 || k % 2 != 0) return {};
#ifdef CPUBLAS_BRGEMM_BF16BF16F32
  const torch::Tensor b = B16.contiguous();
  torch::Tensor packed = torch::empty({k * n}, b.options());
  const auto* in = b.data_ptr<at::BFloat16>();
  auto* out = packed.data_ptr<at::BFloat16>();
  for (int64_t j = 0; j < n; j += kPanel) {
    const int64_t nb = std::min(kPanel, n - j);
    at::native::cpublas::pack(k, nb, n, nb, at::kBFloat16, at::kBFloat16, in + j, out + j * k);
  }
  return packed;
#else
  return {};
#endif
}

// C [rows, cols] (leading dimension ldc) += bias on every row.
LOOPLAB_CLONES void add_bias_block(float* C, int64_t rows, int64_t cols, int64_t ldc, const float* bias) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t c = 0; c < cols; ++c) C[i * ldc + c] += bias[c];
}

// C [m, n] = A [m, k] B (+ bias on every row where given), B packed by pack_for_brgemm, on the
// calling thread. Each block of kRows x kPanel outputs gets the bias right after its product,
// while it is in the first-level cache (copying the bias into C first, for the product to add
// to, wrote every output once more: 4.5% of a bf16-mixed training step's time).
// The caller releases the micro-kernels' hardware state (brgemm_release) when done.
void brgemm_rows(const uint16_t* A, int64_t m, int64_t k, const torch::Tensor& packed, int64_t n, const float* bias,
                 float* C) {
#ifdef CPUBLAS_BRGEMM_BF16BF16F32
  const auto* a = reinterpret_cast<const at::BFloat16*>(A);
  const auto* b = packed.data_ptr<at::BFloat16>();
  for (int64_t r = 0; r < m; r += kRows) {
    const int64_t mr = std::min(kRows, m - r);
    for (int64_t j = 0; j < n; j += kPanel) {
      const int64_t nb = std::min(kPanel, n - j);
      float* block = C + r * n + j;
      at::native::cpublas::brgemm(mr, nb, k, k, nb, n, false, a + r * k, b + j * k, block, true);
      if (bias) add_bias_block(block, mr, nb, n, bias + j);
    }
  }
#else
  (void)A, (void)m, (void)k, (void)packed, (void)n, (void)bias, (void)C;
  TORCH_CHECK(false, "brgemm_rows without ATen's micro-kernels");
#endif
}

void brgemm_release() {
#ifdef CPUBLAS_BRGEMM_BF16BF16F32
  at::native::cpublas::brgemm_release(true);
#endif
}

// C [m, n] = A [m, k] B (+ bias on every row), whole-tensor: row blocks over the threads.
torch::Tensor brgemm_product(const torch::Tensor& A16, const torch::Tensor& packed, int64_t n, const torch::Tensor& bias) {
  const torch::Tensor a = A16.contiguous();
  const int64_t m = a.size(0), k = a.size(1);
  torch::Tensor C = torch::empty({m, n}, a.options().dtype(torch::kFloat32));
  const uint16_t* A = reinterpret_cast<const uint16_t*>(a.data_ptr<at::BFloat16>());
  float* out = C.data_ptr<float>();
  const float* b = bias.defined() ? bias.data_ptr<float>() : nullptr;
  at::parallel_for(0, (m + kRows - 1) / kRows, 1, [&](int64_t begin, int64_t end) {
    const int64_t r0 = begin * kRows, r1 = std::min(m, end * kRows);
    brgemm_rows(A + r0 * k, r1 - r0, k, packed, n, b, out + r0 * n);
    brgemm_release();
  });
  return C;
}

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

// The bfloat16 forms of weights: by the weight's TensorImpl, with the version they were made
// at and a weak reference that tells a freed weight from a new one at the same address.
struct Bf16Copy {
  c10::weak_intrusive_ptr<c10::TensorImpl> of;
  uint32_t version;
  Bf16Weight forms;
};
std::mutex copies_mutex;
std::unordered_map<const c10::TensorImpl*, Bf16Copy> copies;
std::atomic<int64_t> casts{0};

}  // namespace

torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& W, const torch::Tensor& b) {
  if (x.scalar_type() != torch::kBFloat16) return product(x, false, W, true, b);
  const Bf16Weight w = bf16_weight(W);
  if (w.packed_t.defined()) return brgemm_product(x, w.packed_t, W.size(0), b);
  return product(x, false, w.rows, true, b);
}

torch::Tensor weight_gradient(const torch::Tensor& dy, const torch::Tensor& x) { return product(dy, true, x, false); }

torch::Tensor input_gradient(const torch::Tensor& dy, const torch::Tensor& W) {
  if (dy.scalar_type() != torch::kBFloat16) return product(dy, false, W, false);
  const Bf16Weight w = bf16_weight(W);
  if (w.packed.defined()) return brgemm_product(dy, w.packed, W.size(1), {});
  return product(dy, false, w.rows, false);
}

Bf16Weight bf16_weight(const torch::Tensor& W) {
  const c10::TensorImpl* key = W.unsafeGetTensorImpl();
  // (An inference tensor keeps no version counter; it cannot change outside inference mode.)
  const uint32_t version = W.is_inference() ? 0 : W._version();
  std::lock_guard<std::mutex> lock(copies_mutex);
  auto it = copies.find(key);
  if (it != copies.end() && it->second.version == version && it->second.of.lock().get() == key) return it->second.forms;
  if (it == copies.end())
    for (auto e = copies.begin(); e != copies.end();)  // forget the copies of freed weights
      e = e->second.of.expired() ? copies.erase(e) : std::next(e);
  Bf16Weight forms;
  {
    // Ordinary tensors even when asked for inside inference mode (the progressive loss's n
    // iterations): the forms outlive it.
    c10::InferenceMode ordinary(false);
    torch::NoGradGuard no_grad;
    forms.rows = W.to(torch::kBFloat16).contiguous();
    forms.packed_t = pack_for_brgemm(forms.rows.t());
    forms.packed = pack_for_brgemm(forms.rows);
  }
  ++casts;
  auto [entry, inserted] =
      copies.insert_or_assign(key, Bf16Copy{c10::weak_intrusive_ptr<c10::TensorImpl>(W.getIntrusivePtr()), version, forms});
  return entry->second.forms;
}

int64_t bf16_weight_casts() { return casts.load(); }

LOOPLAB_CLONES_BY_LEVEL void round_to_bf16(const float* x, uint16_t* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = bf16_bits(x[i]);
}

std::string bf16_products_library() {
  std::string gemm = "ATen's bfloat16 product, its output rounded";
  if (cblas_gemm_bf16bf16f32) gemm = "MKL's cblas_gemm_bf16bf16f32";
#ifdef LOOPLAB_HAVE_DNNL
  else if (use_dnnl()) gemm = "oneDNN's dnnl_gemm_bf16bf16f32";
#endif
  if (!use_brgemm()) return gemm;
  return "ATen's brgemm micro-kernels (x W^T, dy W) and " + gemm + " (dy^T x)";
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

void tile_linear_bf16(const uint16_t* A, int64_t m, const Bf16Weight& W16, const torch::Tensor& b, float* C) {
  const int64_t n = W16.rows.size(0), k = W16.rows.size(1);
  const float* bias = b.defined() ? b.data_ptr<float>() : nullptr;
  if (W16.packed_t.defined()) {
    brgemm_rows(A, m, k, W16.packed_t, n, bias, C);
    brgemm_release();
    return;
  }
  if (bias)
    for (int64_t i = 0; i < m; ++i) std::memcpy(C + i * n, bias, n * sizeof(float));
  if (gemm_bf16(false, true, m, n, k, A, k, bits(W16.rows), k, bias ? 1.0f : 0.0f, C, n)) return;
  const torch::Tensor a =
      torch::from_blob(const_cast<uint16_t*>(A), {m, k}, torch::TensorOptions().dtype(torch::kBFloat16));
  torch::Tensor c = torch::from_blob(C, {m, n}, torch::TensorOptions().dtype(torch::kFloat32));
  const torch::Tensor out = at::mm(a, W16.rows.t()).to(torch::kFloat32);
  if (bias)
    c.add_(out);
  else
    c.copy_(out);
}

}  // namespace looplab::engine
