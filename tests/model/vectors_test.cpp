// The model against SPEC's reference vectors: four small models whose outputs were worked out
// independently in double precision (tests/data/vectors, copied from shared/vectors).
#include <gtest/gtest.h>

#include "looplab/io/tensor_io.h"
#include "looplab/model/looped_transformer.h"
#include "looplab/run/model_folder.h"
#include "vectors.h"

namespace looplab {
namespace {

using vectors::kDir;
using vectors::Vector;
using vectors::load_index;
using vectors::expect_close;

class VectorsTest : public ::testing::TestWithParam<torch::Dtype> {};

TEST_P(VectorsTest, ForwardMatchesReference) {
  const auto vectors = load_index();
  ASSERT_EQ(vectors.size(), 4u);
  for (const Vector& v : vectors) {
    LoopedTransformer model(v.config);
    load_weights(*model, kDir + "/" + v.name + ".weights.safetensors");
    model->to(GetParam());
    const auto io = read_tensors(kDir + "/" + v.name + ".io.safetensors");
    torch::NoGradGuard no_grad;
    const auto out = model->forward(io.at("input"), v.iterations);
    // float32 to 1e-5 (vectors/README.md; measured 1e-6). The reference used float32's RMSNorm
    // epsilon and float32 storage, so float64 lands near 6e-7 rather than closer.
    const double tol = GetParam() == torch::kFloat64 ? 3e-6 : 1e-5;
    expect_close(out.state, io.at("state"), tol, v.name + " state");
    expect_close(out.logits, io.at("logits"), tol, v.name + " logits");
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, VectorsTest, ::testing::Values(torch::kFloat32, torch::kFloat64));

}  // namespace
}  // namespace looplab
