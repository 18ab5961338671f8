#include "looplab/model/config.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "looplab/util/error.h"

namespace looplab {
namespace {

TEST(Config, JsonRoundTrip) {
  ModelConfig c = default_config("sudoku", Recall::kInternal, Norm::kGru, 64);
  c.heads = 4;
  c.blocks = 2;
  const ModelConfig back = config_from_json(to_json(c), "config.json");
  EXPECT_EQ(to_json(back), to_json(c));
  EXPECT_EQ(back.grid, (std::vector<int64_t>{9, 9}));
  EXPECT_FALSE(back.neighbourhood_attention);
}

// Version 3 names neighbourhood attention "neighbourhood"; versions 1-2 wrote "local".
TEST(Config, NeighbourhoodAttentionUnderBothNames) {
  const ModelConfig c = default_config("prefix-sums", Recall::kExternal, Norm::kPost, 64);
  nlohmann::json j = to_json(c);
  EXPECT_EQ(j["attention"], "neighbourhood");
  EXPECT_EQ(j["schema_version"], 3);
  j["attention"] = "local";
  j.erase("schema_version");
  j["version"] = 2;
  EXPECT_TRUE(config_from_json(j, "config.json").neighbourhood_attention);
  j["attention"] = "windowed";
  try {
    config_from_json(j, "config.json");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("attention"), std::string::npos) << e.what();
  }
}

TEST(Config, TaskDefaults) {
  const ModelConfig p = default_config("prefix-sums", Recall::kExternal, Norm::kPost);
  EXPECT_TRUE(p.neighbourhood_attention);
  EXPECT_EQ(p.window, 5);
  EXPECT_EQ(p.in_channels, 1);
  EXPECT_EQ(p.out_channels, 2);
  EXPECT_EQ(default_config("chess", Recall::kNone, Norm::kPre).in_channels, 12);
  EXPECT_EQ(default_config("sudoku", Recall::kFixed, Norm::kPre).blocks, 15);
}

TEST(Config, ErrorsNameTheField) {
  nlohmann::json j = to_json(default_config("chess", Recall::kNone, Norm::kPre));
  j.erase("width");
  try {
    config_from_json(j, "run/config.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "run/config.json: key 'width': missing");
  }
  j = to_json(default_config("chess", Recall::kNone, Norm::kPre));
  j["norm"] = "sandwich";
  try {
    config_from_json(j, "c.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("key 'norm': unknown normalization 'sandwich'"), std::string::npos);
  }
  j = to_json(default_config("chess", Recall::kNone, Norm::kPre));
  j["heads"] = 7;  // 256 is not divisible by 7
  EXPECT_THROW(config_from_json(j, "c.json"), Error);
  j["heads"] = "8";
  EXPECT_THROW(config_from_json(j, "c.json"), Error);
}

TEST(Config, UnknownValuesListTheValidOnes) {
  try {
    parse_recall("sometimes");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "unknown recall 'sometimes' (expected one of: none, external, internal, fixed)");
  }
  EXPECT_THROW(parse_norm("layer"), Error);
  EXPECT_THROW(default_config("maze", Recall::kNone, Norm::kPre), Error);
}

TEST(Config, RopeNeedsHeadDimDivisibleByTwiceTheAxes) {
  ModelConfig c = default_config("sudoku", Recall::kNone, Norm::kPre, 24);  // head_dim 3
  EXPECT_THROW(validate(c), Error);
  c.width = 32;  // head_dim 4 = 2 x 2 axes
  EXPECT_NO_THROW(validate(c));
}

}  // namespace
}  // namespace looplab
