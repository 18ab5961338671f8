#include "looplab/model/engine/products.h"

#include <cstdlib>
#include <cstring>
#include <type_traits>

#ifdef LOOPLAB_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

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

// op(A) op(B) (+ bias on every row), op transposing where asked.
torch::Tensor product(const torch::Tensor& A, bool ta, const torch::Tensor& B, bool tb,
                      const torch::Tensor& bias = {}) {
  [[maybe_unused]] const int64_t m = A.size(ta ? 1 : 0), k = A.size(ta ? 0 : 1), n = B.size(tb ? 0 : 1);
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

}  // namespace

torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& W, const torch::Tensor& b) {
  return product(x, false, W, true, b);
}

torch::Tensor weight_gradient(const torch::Tensor& dy, const torch::Tensor& x) { return product(dy, true, x, false); }

torch::Tensor input_gradient(const torch::Tensor& dy, const torch::Tensor& W) { return product(dy, false, W, false); }

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

}  // namespace looplab::engine
