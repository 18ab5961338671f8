// looplab on a CUDA device: SPEC's reference vectors in float32 and bfloat16, and a progressive-
// loss step's loss and gradients against the same step on the CPU. Each test skips where there
// is no CUDA device, saying why (a LibTorch built without CUDA, or one built with it on a
// machine whose driver sees no GPU); scripts/gpu-check runs them on a GPU.
#include <gtest/gtest.h>

#include "looplab/io/tensor_io.h"
#include "looplab/model/looped_transformer.h"
#include "looplab/run/model_folder.h"
#include "looplab/platform/runtime.h"
#include "looplab/train/progressive_loss.h"
#include "vectors.h"

namespace looplab {
namespace {

std::string no_cuda_reason() {
  if (!cuda_built()) return "no CUDA: this looplab's LibTorch " TORCH_VERSION " is built without CUDA";
  if (!torch::cuda::is_available())
    return "no CUDA device: LibTorch " TORCH_VERSION " is built with CUDA " + cuda_version() +
           ", but the driver sees no GPU on this machine";
  return "";
}

#define SKIP_WITHOUT_CUDA()                                          \
  do {                                                               \
    if (const std::string why = no_cuda_reason(); !why.empty()) GTEST_SKIP() << why; \
  } while (0)

// The reference vectors on CUDA in `dtype`, compared in float64 against the independent
// double-precision outputs, relative to the largest entry.
// `mixed`: float32 weights under bfloat16 autocast (bf16-mixed).
void vectors_on_cuda(torch::Dtype dtype, double tolerance, bool mixed = false) {
  const auto all = vectors::load_index();
  ASSERT_EQ(all.size(), 4u);
  for (const vectors::Vector& v : all) {
    LoopedTransformer model(v.config);
    load_weights(*model, vectors::kDir + "/" + v.name + ".weights.safetensors");
    model->to(torch::kCUDA, dtype);
    model->set_mixed_precision(mixed);
    const auto io = read_tensors(vectors::kDir + "/" + v.name + ".io.safetensors");
    torch::NoGradGuard no_grad;
    const auto out = model->forward(io.at("input").to(torch::kCUDA, dtype), v.iterations);
    vectors::expect_close(out.state.cpu(), io.at("state"), tolerance, v.name + " state, cuda " + dtype_name(dtype), true);
    vectors::expect_close(out.logits.cpu(), io.at("logits"), tolerance, v.name + " logits, cuda " + dtype_name(dtype), true);
  }
}

TEST(Cuda, VectorsInFloat32) {
  SKIP_WITHOUT_CUDA();
  // cuBLAS in float32 without TF32 (LibTorch's default for matrix products), as on the CPU: 1e-5.
  vectors_on_cuda(torch::kFloat32, 1e-5);
}

TEST(Cuda, VectorsInBfloat16) {
  SKIP_WITHOUT_CUDA();
  // Weights, state and every intermediate in bfloat16 (vectors.h: why 10%). On the CPU the same
  // bfloat16 model lands within it (BfloatSixteen.VectorsOnTheCpu below measures it on every
  // run); cuBLAS accumulates bfloat16 products in float32 as oneDNN does, so the roundings are
  // of the same kind and size on the GPU.
  vectors_on_cuda(torch::kBFloat16, vectors::kBfloat16VectorTolerance);
}

TEST(Cuda, VectorsInBf16Mixed) {
  SKIP_WITHOUT_CUDA();
  // Float32 weights, bfloat16 products under CUDA autocast: within the bfloat16 bound, as on the
  // CPU (MixedPrecision.VectorsOnTheCpu: 1.2-6.6%).
  vectors_on_cuda(torch::kFloat32, vectors::kBfloat16VectorTolerance, /*mixed=*/true);
}

// The same bound on the CPU, where it is measured on every run: the bfloat16 tolerance is no
// guess (vectors.h gives the figures), and it is tight enough to fail on a real slip.
TEST(BfloatSixteen, VectorsOnTheCpu) {
  const auto all = vectors::load_index();
  for (const vectors::Vector& v : all) {
    LoopedTransformer model(v.config);
    load_weights(*model, vectors::kDir + "/" + v.name + ".weights.safetensors");
    model->to(torch::kBFloat16);
    const auto io = read_tensors(vectors::kDir + "/" + v.name + ".io.safetensors");
    torch::NoGradGuard no_grad;
    const auto out = model->forward(io.at("input").to(torch::kBFloat16), v.iterations);
    vectors::expect_close(out.state, io.at("state"), vectors::kBfloat16VectorTolerance, v.name + " state, cpu bfloat16", true);
    vectors::expect_close(out.logits, io.at("logits"), vectors::kBfloat16VectorTolerance, v.name + " logits, cpu bfloat16", true);
  }
}

// One progressive-loss step (n iterations without gradient, k with) on CUDA against the CPU,
// float32, same weights and batch: the loss and every parameter's gradient.
TEST(Cuda, TrainingStepEqualsTheCpus) {
  SKIP_WITHOUT_CUDA();
  for (const char* task : {"prefix-sums", "sudoku"}) {
    torch::manual_seed(3);
    ModelConfig c = default_config(task, Recall::kExternal, Norm::kPost, 64);
    c.heads = 4;
    LoopedTransformer cpu(c), gpu(c);
    {
      torch::NoGradGuard no_grad;
      auto a = cpu->parameters(), b = gpu->parameters();
      for (size_t i = 0; i < a.size(); ++i) b[i].copy_(a[i]);
    }
    gpu->to(torch::kCUDA);
    int64_t L = 1;
    for (int64_t g : c.grid) L *= g;
    if (c.grid.size() == 1) L = 32;
    const torch::Tensor input = torch::randint(0, 2, {8, L, c.in_channels}).to(torch::kFloat32);
    const torch::Tensor target = torch::randint(0, c.out_channels, {8, L});
    const LossResult lc = progressive_backward(*cpu, input, target, 3, 4, 1.0, false);
    const LossResult lg = progressive_backward(*gpu, input.cuda(), target.cuda(), 3, 4, 1.0, false);
    EXPECT_NEAR(lg.loss, lc.loss, 1e-5 * std::abs(lc.loss)) << task;
    auto a = cpu->named_parameters(), b = gpu->named_parameters();
    for (const auto& p : a) {
      const torch::Tensor ga = p.value().grad(), gb = b[p.key()].grad().cpu();
      ASSERT_TRUE(ga.defined() && gb.defined()) << task << " " << p.key();
      const double scale = ga.norm().item<double>();
      EXPECT_LE((ga - gb).norm().item<double>(), 1e-4 * scale + 1e-7) << task << " " << p.key();
    }
  }
}

}  // namespace
}  // namespace looplab
