// bf16-mixed (runtime.h, LoopedTransformerImpl::set_mixed_precision): bfloat16 products under
// autocast over float32 weights, checked against the float64 reference vectors and against
// float32 training.
#include <gtest/gtest.h>

#include "looplab/io/tensor_io.h"
#include "looplab/model/engine/engine.h"
#include "looplab/model/looped_transformer.h"
#include "looplab/run/model_folder.h"
#include "looplab/runtime.h"
#include "looplab/train/progressive_loss.h"
#include "vectors.h"

namespace looplab {
namespace {

using vectors::kDir;
using vectors::Vector;

// The four reference models with float32 weights and bfloat16 products. Autocast rounds each
// product's inputs to bfloat16 (2^-9 relative) and keeps float32 elsewhere, so the outputs land
// within the whole-bfloat16 bound (vectors.h), and measurably off float32's (1e-5): a run
// where autocast did not act (the fused block ignoring it, say) would sit at 1e-6.
TEST(MixedPrecision, VectorsOnTheCpu) {
  for (const Vector& v : vectors::load_index()) {
    LoopedTransformer model(v.config);
    load_weights(*model, kDir + "/" + v.name + ".weights.safetensors");
    model->set_mixed_precision(true);
    const auto io = read_tensors(kDir + "/" + v.name + ".io.safetensors");
    torch::NoGradGuard no_grad;
    const auto out = model->forward(io.at("input"), v.iterations);
    EXPECT_EQ(out.logits.scalar_type(), torch::kFloat32) << v.name << ": logits come back in float32";
    for (const auto& [name, got] : {std::pair{"state", out.state}, std::pair{"logits", out.logits}}) {
      const double rel = vectors::expect_close(got, io.at(name), vectors::kBfloat16VectorTolerance,
                                               v.name + " " + name + " (bf16-mixed)", /*print=*/true);
      EXPECT_GT(rel, 1e-4) << v.name << " " << name << ": as close as float32, so the products were not in bfloat16";
    }
    EXPECT_EQ(model->projection->weight.scalar_type(), torch::kFloat32);
  }
  EXPECT_FALSE(autocast_enabled(c10::DeviceType::CPU)) << "the scope is left as it was found";
}

// A training step under bf16-mixed: float32 gradients on float32 weights, within bfloat16's
// reach of the float32 step's, and the same with the fused engine allowed or not (under
// autocast every iteration takes the plain path).
TEST(MixedPrecision, TrainingStepNearFloat32) {
  ModelConfig c = default_config("prefix-sums", Recall::kExternal, Norm::kPost, 64);
  c.heads = 4;
  torch::manual_seed(7);
  const torch::Tensor input = torch::randint(0, 2, {8, 32, 1}).to(torch::kFloat32) - 0.5;
  const torch::Tensor target = torch::randint(0, 2, {8, 32});
  auto step = [&](bool mixed, bool plain) {
    torch::manual_seed(1);
    LoopedTransformer model(c);
    model->set_mixed_precision(mixed);
    std::optional<PlainEngine> scope;
    if (plain) scope.emplace();
    const LossResult r = progressive_backward(*model, input, target, 2, 3, 1.0, false);
    std::vector<torch::Tensor> grads;
    for (const auto& p : model->parameters()) {
      EXPECT_EQ(p.grad().scalar_type(), torch::kFloat32);
      grads.push_back(p.grad().flatten());
    }
    return std::pair{r.loss, torch::cat(grads)};
  };
  const auto [loss32, grad32] = step(false, false);
  const auto [loss_mixed, grad_mixed] = step(true, false);
  const auto [loss_mixed_plain, grad_mixed_plain] = step(true, true);
  EXPECT_NEAR(loss_mixed, loss32, 0.02 * loss32);
  const double rel = ((grad_mixed - grad32).norm() / grad32.norm()).item<double>();
  EXPECT_LT(rel, 0.05) << "bf16-mixed gradient against float32's";
  EXPECT_GT(rel, 1e-4) << "bf16-mixed gradient equal to float32's: autocast did not act";
  EXPECT_TRUE(torch::equal(grad_mixed, grad_mixed_plain)) << "the fused block ran under autocast";
  EXPECT_EQ(loss_mixed, loss_mixed_plain);
}

// Beyond 8 windows the neighbourhood attention gathers its keys (the fused engine declines
// under autocast): the output stays within bfloat16's reach of float32's.
TEST(MixedPrecision, LongSequencesGatherTheirWindows) {
  ModelConfig c = default_config("prefix-sums", Recall::kExternal, Norm::kPost, 32);
  c.heads = 4;
  torch::manual_seed(3);
  LoopedTransformer model(c);
  const torch::Tensor input = torch::randint(0, 2, {2, 100, 1}).to(torch::kFloat32) - 0.5;
  torch::InferenceMode inference;
  const torch::Tensor f32 = model->forward(input, 4).logits;
  model->set_mixed_precision(true);
  const torch::Tensor mixed = model->forward(input, 4).logits;
  const double rel = ((mixed - f32).abs().max() / f32.abs().max()).item<double>();
  EXPECT_LT(rel, 0.05);
  EXPECT_GT(rel, 1e-5);
}

}  // namespace
}  // namespace looplab
