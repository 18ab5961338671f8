// The typed JSON reader (io/json_reader.h): types are not converted, errors name the key path
// and the file, schema versions are bounded.
#include "looplab/io/json_reader.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

namespace looplab::json_reader {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

struct Thing {
  int64_t count = 0;
  double rate = 0;
  std::vector<int64_t> sizes;
  std::string name = "default";
};

Thing read_thing(const json& j) {
  return read_typed<Thing>(j, "DIR/thing.json", [](const json& j) {
    Thing t;
    need_object(j);
    get(j, "count", t.count);
    get(j, "rate", t.rate);
    get_object(j, "inner", [&](const json& inner) { get(inner, "sizes", t.sizes); });
    get_optional(j, "name", t.name);
    return t;
  });
}

TEST(JsonReader, ReadsEachTypeAsWritten) {
  const Thing t = read_thing(json::parse(R"({"count": 3, "rate": 2, "inner": {"sizes": [1, 2]}})"));
  EXPECT_EQ(t.count, 3);
  EXPECT_EQ(t.rate, 2.0);  // an integer is a number
  EXPECT_EQ(t.sizes, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(t.name, "default");  // absent: left as it was
  EXPECT_TRUE(std::isnan(read_thing(json::parse(R"({"count": 3, "rate": null, "inner": {"sizes": []}})")).rate));
}

TEST(JsonReader, ErrorsNameTheFileAndTheKeyPath) {
  EXPECT_EQ(error_of([] { read_thing(json::parse(R"({"count": 1.5, "rate": 1, "inner": {"sizes": []}})")); }),
            "DIR/thing.json: key 'count': expected an integer, got 1.5");
  EXPECT_EQ(error_of([] { read_thing(json::parse(R"({"count": 1, "rate": "x", "inner": {"sizes": []}})")); }),
            "DIR/thing.json: key 'rate': expected a number, got \"x\"");
  EXPECT_EQ(error_of([] { read_thing(json::parse(R"({"count": 1, "rate": 1, "inner": {"sizes": [1, true]}})")); }),
            "DIR/thing.json: key 'inner/sizes/1': expected an integer, got true");
  EXPECT_EQ(error_of([] { read_thing(json::parse(R"({"count": 1, "rate": 1})")); }),
            "DIR/thing.json: key 'inner': missing");
  EXPECT_EQ(error_of([] { read_thing(json::parse(R"([1])")); }), "DIR/thing.json: expected a JSON object, got [1]");
  uint64_t u = 0;
  EXPECT_EQ(error_of([&] { get(json::parse(R"({"seed": -1})"), "seed", u); }), "key 'seed': expected an integer >= 0, got -1");
  // A library parser's Error inside nested() is named by the key.
  EXPECT_EQ(error_of([] { nested("norm", [] { throw Error("unknown normalization 'x'"); }); }),
            "key 'norm': unknown normalization 'x'");
}

TEST(JsonReader, SchemaVersions) {
  EXPECT_EQ(read_schema_version(json::parse("{}"), 3), 1);  // before versions
  EXPECT_EQ(read_schema_version(json::parse(R"({"schema_version": 2})"), 3), 2);
  EXPECT_EQ(read_schema_version(json::parse(R"({"version": 2})"), 3, "version"), 2);  // its old name
  EXPECT_EQ(read_schema_version(json::parse(R"({"version": 2})"), 3), 1);             // not a name it had
  EXPECT_EQ(error_of([] { read_schema_version(json::parse(R"({"schema_version": 4})"), 3); }),
            "schema_version 4 is newer than this looplab reads (3)");
  EXPECT_EQ(error_of([] { read_schema_version(json::parse(R"({"schema_version": 0})"), 3); }),
            "key 'schema_version': expected a positive integer, got 0");
}

}  // namespace
}  // namespace looplab::json_reader
