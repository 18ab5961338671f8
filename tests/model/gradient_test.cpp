// Autograd gradients against central finite differences, in double precision, for every
// recall x normalization variant on a tiny model.
#include <gtest/gtest.h>

#include "../util/finite_difference.h"
#include "looplab/model/looped_transformer.h"

namespace looplab {
namespace {

struct Variant {
  Recall recall;
  Norm norm;
  std::string task;
};

std::string name(const Variant& v) { return to_string(v.recall) + "_" + to_string(v.norm) + "_" + v.task; }
void PrintTo(const Variant& v, std::ostream* os) { *os << name(v); }

class GradientTest : public ::testing::TestWithParam<Variant> {};

TEST_P(GradientTest, AutogradMatchesFiniteDifferences) {
  const Variant& v = GetParam();
  torch::manual_seed(11);
  ModelConfig c = default_config(v.task, v.recall, v.norm, 16);
  c.heads = 2;
  if (v.task == "prefix-sums") c.window = 3;
  if (v.recall == Recall::kFixed) c.blocks = 2;
  if (v.task == "sudoku") c.grid = {3, 3};
  LoopedTransformer model(c);
  model->to(torch::kFloat64);
  const int64_t L = v.task == "prefix-sums" ? 7 : 9;
  const int64_t iterations = v.recall == Recall::kFixed ? 1 : 3;
  // Parameters away from their initial values so no symmetry hides an error.
  {
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters()) p.add_(torch::randn_like(p) * 0.3);
  }
  const torch::Tensor input = torch::randn({2, L, c.in_channels}, torch::kFloat64).requires_grad_(true);
  const torch::Tensor weights = torch::randn({2, L, c.out_channels}, torch::kFloat64);
  auto loss = [&](const torch::Tensor& in) { return (model->forward(in, iterations).logits * weights).sum(); };

  model->zero_grad();
  loss(input).backward();

  // Central difference of the loss in one entry of a tensor's storage.
  const double h = 1e-5;
  auto numeric = [&](const torch::Tensor& storage, int64_t idx) {
    return testing::central_difference(storage, idx, h, [&] {
      torch::NoGradGuard no_grad;
      return loss(input).item<double>();
    });
  };
  int checked = 0;
  auto expect_match = [&](double analytic, double fd, const std::string& what) {
    EXPECT_NEAR(analytic, fd, 1e-6 * (std::abs(analytic) + std::abs(fd)) + 1e-8) << what;
    ++checked;
  };
  // Each parameter tensor: three entries spread over it.
  for (auto& item : model->named_parameters()) {
    const torch::Tensor grad = item.value().grad().view({-1});
    const int64_t n = grad.numel();
    for (int64_t idx : {int64_t{0}, n / 2, n - 1})
      expect_match(grad[idx].item<double>(), numeric(item.value().data(), idx),
                   item.key() + "[" + std::to_string(idx) + "]");
  }
  // The input: every entry of the first example.
  const torch::Tensor input_grad = input.grad().view({-1});
  for (int64_t idx = 0; idx < L * c.in_channels; ++idx)
    expect_match(input_grad[idx].item<double>(), numeric(input.data(), idx), "input[" + std::to_string(idx) + "]");
  EXPECT_GT(checked, 40);
}

std::vector<Variant> all_variants() {
  std::vector<Variant> out;
  for (Recall r : {Recall::kNone, Recall::kExternal, Recall::kInternal, Recall::kFixed})
    for (Norm n : {Norm::kPre, Norm::kPeri, Norm::kPost, Norm::kGru}) out.push_back({r, n, "prefix-sums"});
  // 2-D RoPE with full attention.
  out.push_back({Recall::kExternal, Norm::kPost, "sudoku"});
  out.push_back({Recall::kInternal, Norm::kGru, "sudoku"});
  return out;
}

INSTANTIATE_TEST_SUITE_P(AllVariants, GradientTest, ::testing::ValuesIn(all_variants()),
                         [](const auto& info) {
                           std::string n = name(info.param);
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

}  // namespace
}  // namespace looplab
