#include "looplab/io/safetensors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <random>

#include "looplab/util/error.h"

namespace looplab {
namespace {

TensorMap sample_tensors() {
  std::mt19937 rng(7);
  TensorMap m;
  auto make = [&](const std::string& dtype, std::vector<int64_t> shape) {
    TensorRecord r{dtype, shape, {}};
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    r.data.resize(n * safetensors_dtype_size(dtype));
    for (char& c : r.data) c = static_cast<char>(rng());
    return r;
  };
  m["a.weight"] = make("F32", {3, 5});
  m["b"] = make("F64", {7});
  m["c.scalar"] = make("BF16", {});
  m["empty"] = make("F32", {0, 4});
  return m;
}

TEST(Safetensors, RoundTripIsBitExact) {
  const TensorMap in = sample_tensors();
  std::map<std::string, std::string> meta_in = {{"format", "pt"}}, meta_out;
  const std::string bytes = encode_safetensors(in, meta_in);
  const TensorMap out = decode_safetensors(bytes, "mem", &meta_out);
  ASSERT_EQ(out.size(), in.size());
  for (const auto& [name, t] : in) {
    const TensorRecord& o = out.at(name);
    EXPECT_EQ(o.dtype, t.dtype) << name;
    EXPECT_EQ(o.shape, t.shape) << name;
    EXPECT_EQ(o.data, t.data) << name;  // byte for byte
  }
  EXPECT_EQ(meta_out, meta_in);
}

TEST(Safetensors, HeaderFollowsTheFormat) {
  const std::string bytes = encode_safetensors(sample_tensors());
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);  // little-endian on every machine we run on
  EXPECT_EQ((8 + n) % 8, 0u) << "data must start 8-byte aligned";
  const auto header = nlohmann::json::parse(bytes.substr(8, n));
  EXPECT_EQ(header["a.weight"]["dtype"], "F32");
  EXPECT_EQ(header["a.weight"]["shape"], nlohmann::json({3, 5}));
  const auto off = header["a.weight"]["data_offsets"];
  EXPECT_EQ(off[1].get<uint64_t>() - off[0].get<uint64_t>(), 60u);
}

TEST(Safetensors, EveryTruncationIsAnError) {
  const std::string bytes = encode_safetensors(sample_tensors());
  for (size_t len = 0; len < bytes.size(); ++len) {
    try {
      decode_safetensors(std::string_view(bytes).substr(0, len), "cut.safetensors");
      ADD_FAILURE() << "no error at length " << len;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("cut.safetensors"), std::string::npos);
    }
  }
}

std::string with_header(const std::string& header, size_t data_bytes) {
  std::string out(8, '\0');
  uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  return out + header + std::string(data_bytes, '\0');
}

TEST(Safetensors, CorruptHeadersAreErrors) {
  EXPECT_THROW(decode_safetensors(with_header("{not json", 0), "x"), Error);
  EXPECT_THROW(decode_safetensors(with_header("[1,2]", 0), "x"), Error);
  EXPECT_THROW(decode_safetensors(with_header(R"({"a":{"dtype":"F32","shape":[2]}})", 8), "x"), Error);
  EXPECT_THROW(decode_safetensors(with_header(R"({"a":{"dtype":"Q7","shape":[2],"data_offsets":[0,8]}})", 8), "x"),
               Error);
  // Size that does not match the shape.
  EXPECT_THROW(decode_safetensors(with_header(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8), "x"),
               Error);
  // Overlapping tensors.
  EXPECT_THROW(decode_safetensors(with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},
                                                  "b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                                              12),
                                  "x"),
               Error);
  // A header length far beyond the file.
  std::string huge(8, '\xff');
  EXPECT_THROW(decode_safetensors(huge, "x"), Error);
}

TEST(Safetensors, MissingFileIsAnError) {
  try {
    read_safetensors("/nonexistent/dir/w.safetensors");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/w.safetensors"), std::string::npos);
  }
}

}  // namespace
}  // namespace looplab
