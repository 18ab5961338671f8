// Weights interoperate with the paper's released code: a state dict under its names and
// conventions (the reference vectors' weights) gives, through looplab's encoders, exactly what
// the same weights give on inputs built by hand the released code's way (SPEC section 3:
// prefix sums fed as bit - 0.5; chess as 12 planes, white P N B R Q K then black's, grid row 0 =
// rank 8, black to move flipped with colours swapped, files mirrored when the mover's king
// stands on files a-d: `chess_data.py`).
#include <gtest/gtest.h>

#include "looplab/io/atomic_file.h"
#include "looplab/model/looped_transformer.h"
#include "looplab/run/model_folder.h"
#include "looplab/tasks/registry.h"
#include "vectors.h"

namespace looplab {
namespace {

LoopedTransformer reference_model(const std::string& name) {
  for (const vectors::Vector& v : vectors::load_index())
    if (v.name == name) {
      LoopedTransformer model(v.config);
      load_weights(*model, vectors::kDir + "/" + name + ".weights.safetensors");
      model->eval();
      return model;
    }
  ADD_FAILURE() << "no reference vector " << name;
  return nullptr;
}

torch::Tensor input_of(const Examples& e) {
  return torch::from_blob(const_cast<float*>(e.inputs.data()), {e.count, e.positions, e.channels}, torch::kFloat32)
      .clone();
}

TEST(Interop, PrefixSumsEncoderIsTheReleasedCodes) {
  LoopedTransformer model = reference_model("prefix-sums-external-post");
  ASSERT_TRUE(model);
  const std::string path = ::testing::TempDir() + "interop_ps.csv";
  write_file_atomic(path, "input,target\n011010011100,010011101000\n111110000011,101011111101\n");
  DataOptions d = task("prefix-sums").default_data();
  d.val_file = path;
  d.val_count = 2;
  const Examples e = task("prefix-sums").load(d, "val");
  // By hand: each bit minus 0.5.
  const char* rows[] = {"011010011100", "111110000011"};
  torch::Tensor hand = torch::empty({2, 12, 1});
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 12; ++j) hand[i][j][0] = (rows[i][j] == '1' ? 1.0f : 0.0f) - 0.5f;
  torch::NoGradGuard no_grad;
  const auto ours = model->forward(input_of(e), 3), theirs = model->forward(hand, 3);
  EXPECT_TRUE(torch::equal(ours.logits, theirs.logits));
  EXPECT_TRUE(torch::equal(ours.logits.argmax(-1), theirs.logits.argmax(-1)));
  // The bit itself (looplab's encoding before 2026-12-03) gives other outputs.
  EXPECT_FALSE(torch::allclose(model->forward(hand + 0.5, 3).logits, theirs.logits));
}

TEST(Interop, ChessEncoderIsTheReleasedCodes) {
  LoopedTransformer model = reference_model("chess-none-peri");
  ASSERT_TRUE(model);
  // The same position from each side: white to move (king e1, rook h1; black king e8), and its
  // colour-swapped mirror with black to move, which the released code flips onto the first.
  torch::Tensor hand = torch::zeros({1, 64, 12});
  auto put = [&](int plane, int row, int column) { hand[0][row * 8 + column][plane] = 1.0f; };
  put(5, 7, 4);   // white king e1: rank 1 -> row 7, file e -> column 4
  put(3, 7, 7);   // white rook h1
  put(11, 0, 4);  // black king e8: rank 8 -> row 0
  torch::NoGradGuard no_grad;
  const auto theirs = model->forward(hand, 3);
  for (const char* fen : {"4k3/8/8/8/8/8/8/4K2R w K - 0 1", "4k2r/8/8/8/8/8/8/4K3 b k - 0 1"}) {
    const Examples e = task("chess").encode_query(fen);
    const torch::Tensor input = input_of(e);
    EXPECT_TRUE(torch::equal(input, hand)) << fen;
    EXPECT_TRUE(torch::equal(model->forward(input, 3).logits, theirs.logits)) << fen;
  }
}

}  // namespace
}  // namespace looplab
