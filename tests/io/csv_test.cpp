#include "looplab/io/csv.h"

#include <gtest/gtest.h>

#include "looplab/util/error.h"

namespace looplab {
namespace {

TEST(Csv, ReadsColumnsByNameAndCountsLines) {
  CsvReader csv("f.csv", "b,a,c\r\n2,1,3\n\n5,4,6", {"a", "c"});
  ASSERT_TRUE(csv.next());
  EXPECT_EQ(csv.field("a"), "1");
  EXPECT_EQ(csv.field("c"), "3");
  EXPECT_EQ(csv.line(), 2);
  ASSERT_TRUE(csv.next());  // the blank line 3 is skipped
  EXPECT_EQ(csv.field("a"), "4");
  EXPECT_EQ(csv.line(), 4);
  EXPECT_EQ(csv.where(), "f.csv:4");
  EXPECT_FALSE(csv.next());
}

TEST(Csv, EmptyTrailingFieldIsAField) {
  CsvReader csv("f.csv", "a,b\n1,\n", {"a", "b"});
  ASSERT_TRUE(csv.next());
  EXPECT_EQ(csv.field_count(), 2u);
  EXPECT_EQ(csv.field("b"), "");
}

TEST(Csv, MissingHeaderColumnAndShortRowAreErrors) {
  try {
    CsvReader csv("f.csv", "a,x\n1,2\n", {"a", "b"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("f.csv:1: header must name the columns a,b"), std::string::npos) << e.what();
  }
  EXPECT_THROW(CsvReader("f.csv", "", {"a"}), Error);
  CsvReader csv("f.csv", "a,b\n1\n", {"a", "b"});
  ASSERT_TRUE(csv.next());
  try {
    csv.field("b");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("f.csv:2: missing field 'b'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace looplab
