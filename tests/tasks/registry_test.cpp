// The task registry and the Task interface: every task's examples have its spec's shape, its
// presets and split sizes are SPEC's, and bad names and splits are errors naming the value.
#include "looplab/tasks/registry.h"

#include <gtest/gtest.h>

#include <set>

#include "looplab/util/error.h"

namespace looplab {
namespace {

TEST(Registry, EveryTaskByItsNameOnce) {
  std::set<std::string> names;
  for (const Task* t : all_tasks()) {
    EXPECT_TRUE(names.insert(t->name()).second) << t->name();
    EXPECT_EQ(&task(t->name()), t);
    EXPECT_EQ(t->default_data().task, t->name());
  }
  // The paper's three tasks are there, in its order, and a bad name lists the valid ones.
  EXPECT_EQ(task_names().rfind("prefix-sums, sudoku", 0), 0u);
  EXPECT_NE(task_names().find("chess"), std::string::npos);
  try {
    task("maze");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("unknown task 'maze' (expected one of: prefix-sums, sudoku, chess", 0), 0u);
  }
}

TEST(Registry, SyntheticExamplesHaveTheSpecsShape) {
  for (const Task* t : all_tasks()) {
    const TaskSpec& s = t->spec();
    int64_t positions = 1;
    for (int64_t g : s.grid) positions *= g;
    const Examples e = t->synthetic(3, positions, 1);
    EXPECT_EQ(e.count, 3);
    EXPECT_EQ(e.positions, positions);
    EXPECT_EQ(e.channels, s.in_channels) << s.name;
    EXPECT_EQ(static_cast<int64_t>(e.inputs.size()), 3 * positions * s.in_channels);
    for (int64_t c : e.targets) EXPECT_TRUE(c >= 0 && c < s.out_channels) << s.name;
  }
}

TEST(Registry, PresetsAndSplitSizes) {
  const Task& ps = task("prefix-sums");
  EXPECT_EQ(ps.default_data().train_count, 8000);
  EXPECT_EQ(ps.preset("cpu").width, 64);
  EXPECT_EQ(ps.preset("paper").width, 256);
  EXPECT_EQ(ps.preset("paper").epochs, 100);
  for (const char* name : {"sudoku", "chess"}) {
    EXPECT_EQ(task(name).default_data().train_count, 40000) << name;
    const Preset p = task(name).preset("cpu");
    EXPECT_EQ(p.width, 128);
    EXPECT_EQ(p.batch, 100);
    EXPECT_EQ(p.train_count, 4000);
  }
  EXPECT_THROW(ps.preset("huge"), Error);
}

TEST(Registry, PrefixSumsLoadAndBadSplits) {
  DataOptions d = task("prefix-sums").default_data();
  d.val_count = 5;
  d.train_bits = 7;
  const Examples e = task("prefix-sums").load(d, "val");
  ASSERT_EQ(e.count, 5);
  ASSERT_EQ(e.positions, 7);
  for (int64_t i = 0; i < e.count; ++i) {
    int parity = 0;
    for (int64_t j = 0; j < 7; ++j) {
      const float x = e.inputs[i * 7 + j];  // the bit minus 0.5
      ASSERT_TRUE(x == -0.5f || x == 0.5f) << x;
      parity ^= x > 0 ? 1 : 0;
      EXPECT_EQ(e.targets[i * 7 + j], parity);
    }
  }
  EXPECT_THROW(d.count("test"), Error);
  EXPECT_THROW(task("prefix-sums").load(d, "test"), Error);
}

TEST(Registry, SolveQueriesEncodeAndNameTheirOption) {
  const Examples s = task("sudoku").encode_query(std::string(81, '.'));
  EXPECT_EQ(s.positions, 81);
  EXPECT_EQ(s.channels, 10);
  try {
    task("sudoku").encode_query("12z");
    FAIL();
  } catch (const OptionError& e) {
    EXPECT_EQ(e.option(), "puzzle");
  }
  try {
    task("chess").encode_query("8/8/8/8/8/8/8/K6k x - -");
    FAIL();
  } catch (const OptionError& e) {
    EXPECT_EQ(e.option(), "fen");
  }
  const Examples c = task("chess").encode_query("r6k/pp2r2p/4Rp1Q/3p4/8/1N1P2R1/PqP2bPP/7K b - - 0 24");
  float pieces = 0;
  for (float v : c.inputs) pieces += v;
  EXPECT_EQ(pieces, 20);  // every piece on the board in one plane
}

}  // namespace
}  // namespace looplab
