#include "looplab/tasks/prefix_sums/prefix_sums.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <cmath>
#include <functional>

#include "looplab/io/atomic_file.h"
#include "looplab/tasks/registry.h"
#include "looplab/util/error.h"

namespace looplab {
namespace {

namespace fs = std::filesystem;

TEST(PrefixSums, ParityAgainstDirectSum) {
  const prefix_sums::Dataset d = prefix_sums::generate(33, 50, 4);
  ASSERT_EQ(d.size(), 50u);
  for (size_t i = 0; i < d.size(); ++i)
    for (size_t k = 0; k < 33; ++k) {
      int sum = 0;
      for (size_t j = 0; j <= k; ++j) sum += d.inputs[i][j];
      EXPECT_EQ(d.targets[i][k], sum % 2);
    }
}

TEST(PrefixSums, ReproducibleBySeed) {
  EXPECT_EQ(prefix_sums::generate(32, 10, 7).inputs, prefix_sums::generate(32, 10, 7).inputs);
  EXPECT_NE(prefix_sums::generate(32, 10, 7).inputs, prefix_sums::generate(32, 10, 8).inputs);
  // Bits are balanced: 32,000 draws, mean within 5 standard deviations of 1/2.
  const auto d = prefix_sums::generate(32, 1000, 1);
  double ones = 0;
  for (const auto& row : d.inputs)
    for (uint8_t b : row) ones += b;
  EXPECT_NEAR(ones / 32000, 0.5, 5 * 0.5 / std::sqrt(32000.0));
}

class PrefixSumsCsv : public ::testing::Test {
 protected:
  void SetUp() override { path_ = (fs::temp_directory_path() / ("ps_" + std::to_string(::getpid()) + ".csv")).string(); }
  void TearDown() override { fs::remove(path_); }
  std::string error_for(const std::string& text) {
    write_file_atomic(path_, text);
    try {
      prefix_sums::read_csv(path_);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  std::string path_;
};

TEST_F(PrefixSumsCsv, RoundTrip) {
  const auto d = prefix_sums::generate(12, 20, 3);
  prefix_sums::write_csv(path_, d);
  const auto back = prefix_sums::read_csv(path_);
  EXPECT_EQ(back.inputs, d.inputs);
  EXPECT_EQ(back.targets, d.targets);
  EXPECT_EQ(back.bits, 12);
}

TEST_F(PrefixSumsCsv, MalformedFilesNameTheLine) {
  EXPECT_EQ(error_for("input,target\n0110,0100\n0120,0110\n"),
            path_ + ":3: field 'input': character 3 is '2', expected 0 or 1");
  EXPECT_EQ(error_for("input,target\n0110,0100\n01101,01001\n"), path_ + ":3: field 'input' has 5 bits, earlier rows have 4");
  EXPECT_EQ(error_for("input,target\n0110,0101\n"), path_ + ":2: field 'target': bit 4 is not the prefix parity of the input");
  EXPECT_EQ(error_for("input,target\n0110,010\n"), path_ + ":2: field 'target' has 3 bits, 'input' has 4");
  EXPECT_EQ(error_for("input,output\n0110,0100\n"),
            path_ + ":1: header must name the columns input,target, got 'input,output'");
  EXPECT_EQ(error_for("input,target\n0110\n"), path_ + ":2: expected 2 fields (input,target), got 1");
  EXPECT_EQ(error_for("input,target\n0110,0100,1\n"), path_ + ":2: expected 2 fields (input,target), got 3");
  EXPECT_EQ(error_for("input,target\n,\n"), path_ + ":2: field 'input' is empty");
  EXPECT_EQ(error_for(""), path_ + ": empty file (expected a header line)");
  EXPECT_EQ(error_for("input,target\n"), path_ + ": no examples after the header");
  // Columns in the other order, and Windows line ends, are fine.
  EXPECT_EQ(error_for("target,input\r\n0100,0110\r\n"), "");
}

// The encoder on a hand-made string: the released code feeds `bit - 0.5` (SPEC section 3), and
// the target is the prefix parity, worked out by hand.
TEST_F(PrefixSumsCsv, EncodesBitMinusHalf) {
  write_file_atomic(path_, "input,target\n0110100,0100111\n");
  DataOptions d = task("prefix-sums").default_data();
  d.val_file = path_;
  d.val_count = 1;
  const Examples e = task("prefix-sums").load(d, "val");
  ASSERT_EQ(e.count, 1);
  ASSERT_EQ(e.positions, 7);
  ASSERT_EQ(e.channels, 1);
  EXPECT_EQ(e.inputs, (std::vector<float>{-0.5f, 0.5f, 0.5f, -0.5f, 0.5f, -0.5f, -0.5f}));
  EXPECT_EQ(e.targets, (std::vector<int64_t>{0, 1, 0, 0, 1, 1, 1}));
  // Generated examples are encoded alike.
  const Examples s = task("prefix-sums").synthetic(3, 16, 5);
  for (float v : s.inputs) EXPECT_TRUE(v == -0.5f || v == 0.5f) << v;
}

}  // namespace
}  // namespace looplab
