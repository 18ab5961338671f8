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

// Values as bytes in the file's little-endian order.
template <typename T>
std::string bytes_of(std::initializer_list<T> values) {
  std::string out;
  for (T v : values) out.append(reinterpret_cast<const char*>(&v), sizeof v);
  return out;
}

template <typename T>
std::vector<T> values_of(const TensorRecord& r) {
  std::vector<T> out(r.data.size() / sizeof(T));
  std::memcpy(out.data(), r.data.data(), r.data.size());
  return out;
}

// A file written out by hand from the format's description (an 8-byte little-endian header
// length, the JSON header padded with spaces to 8 bytes, the data), its keys in the order
// looplab writes them (sorted): looplab reads what the format says, and writes these bytes.
TEST(Safetensors, ReadsAndWritesAFileWrittenByHand) {
  const std::string header =
      R"({"__metadata__":{"k":"v"},"x":{"data_offsets":[0,8],"dtype":"F32","shape":[2]},)"
      R"("y":{"data_offsets":[8,14],"dtype":"I16","shape":[1,3]}})";
  std::string padded = header;
  while ((8 + padded.size()) % 8 != 0) padded += ' ';
  const std::string file = bytes_of<uint64_t>({padded.size()}) + padded + bytes_of<float>({1.0f, -2.5f}) +
                           bytes_of<int16_t>({7, -8, 300});
  std::map<std::string, std::string> meta;
  const TensorMap t = decode_safetensors(file, "by hand", &meta);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(meta, (std::map<std::string, std::string>{{"k", "v"}}));
  EXPECT_EQ(t.at("x").dtype, "F32");
  EXPECT_EQ(t.at("x").shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(values_of<float>(t.at("x")), (std::vector<float>{1.0f, -2.5f}));
  EXPECT_EQ(t.at("y").shape, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(values_of<int16_t>(t.at("y")), (std::vector<int16_t>{7, -8, 300}));
  EXPECT_EQ(encode_safetensors(t, meta), file);
}

// A file written by Python's safetensors (tests/io/data/make_python_safetensors.py): the
// reference implementation's bytes read back to the values the script wrote.
TEST(Safetensors, ReadsAFileWrittenByPythonsSafetensors) {
  std::map<std::string, std::string> meta;
  const TensorMap t = read_safetensors(LOOPLAB_SOURCE_DIR "/tests/io/data/python.safetensors", &meta);
  EXPECT_EQ(meta, (std::map<std::string, std::string>{{"format", "pt"}, {"epochs_done", "7"}}));
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t.at("model.weight").dtype, "F32");
  EXPECT_EQ(t.at("model.weight").shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values_of<float>(t.at("model.weight")), (std::vector<float>{1.5f, -2.0f, 0.25f, 3.0f, 1e-3f, -0.0f}));
  EXPECT_EQ(t.at("steps").dtype, "I64");
  EXPECT_EQ(values_of<int64_t>(t.at("steps")), (std::vector<int64_t>{1, -2, 3000000000}));
  EXPECT_EQ(t.at("half").dtype, "BF16");
  EXPECT_EQ(values_of<uint16_t>(t.at("half")), (std::vector<uint16_t>{0x3F00, 0xBFA0}));  // 0.5, -1.25
  EXPECT_EQ(t.at("scalar").dtype, "F64");
  EXPECT_TRUE(t.at("scalar").shape.empty());
  EXPECT_EQ(values_of<double>(t.at("scalar")), (std::vector<double>{0x1p-20}));
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
