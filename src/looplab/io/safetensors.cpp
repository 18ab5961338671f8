#include "looplab/io/safetensors.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "looplab/io/atomic_file.h"
#include "looplab/util/error.h"

namespace looplab {

using json = nlohmann::json;

namespace {

// Headers beyond this are certainly corrupt; the reference implementation uses the same cap.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

uint64_t read_le64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

void append_le64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

size_t safetensors_dtype_size(const std::string& dtype) {
  static const std::map<std::string, size_t> sizes = {
      {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8}, {"I32", 4},
      {"I16", 2}, {"I8", 1},  {"U8", 1},  {"BOOL", 1}};
  auto it = sizes.find(dtype);
  if (it == sizes.end()) throw Error("unsupported safetensors dtype '" + dtype + "'");
  return it->second;
}

std::string encode_safetensors(const TensorMap& tensors,
                               const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    int64_t numel = 1;
    for (int64_t s : t.shape) numel *= s;
    if (t.data.size() != static_cast<size_t>(numel) * safetensors_dtype_size(t.dtype))
      throw Error("tensor '" + name + "': data size does not match its shape and dtype");
    header[name] = {{"dtype", t.dtype},
                    {"shape", t.shape},
                    {"data_offsets", {offset, offset + t.data.size()}}};
    offset += t.data.size();
  }
  std::string text = header.dump();
  // Pad with spaces so the data starts 8-byte aligned, as the reference writer does.
  while ((text.size() + 8) % 8 != 0) text.push_back(' ');
  std::string out;
  out.reserve(8 + text.size() + offset);
  append_le64(out, text.size());
  out += text;
  for (const auto& [name, t] : tensors) out += t.data;
  return out;
}

TensorMap decode_safetensors(std::string_view bytes, const std::string& source,
                             std::map<std::string, std::string>* metadata) {
  auto fail = [&](const std::string& why) -> Error {
    return Error(source + ": not a valid safetensors file: " + why);
  };
  if (bytes.size() < 8) throw fail("truncated (shorter than the 8-byte header length)");
  const uint64_t header_len = read_le64(bytes.data());
  if (header_len > kMaxHeaderBytes) throw fail("header length " + std::to_string(header_len) + " is implausible");
  if (header_len > bytes.size() - 8)
    throw fail("truncated (header of " + std::to_string(header_len) + " bytes, file has " +
               std::to_string(bytes.size() - 8) + " after the length)");
  json header;
  try {
    header = json::parse(bytes.substr(8, header_len));
  } catch (const json::exception& e) {
    throw fail(std::string("header is not JSON (") + e.what() + ")");
  }
  if (!header.is_object()) throw fail("header is not a JSON object");

  const std::string_view data = bytes.substr(8 + header_len);
  TensorMap tensors;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    if (name == "__metadata__") {
      if (metadata) {
        if (!it->is_object()) throw fail("__metadata__ is not an object");
        for (auto m = it->begin(); m != it->end(); ++m)
          if (m->is_string()) (*metadata)[m.key()] = m->get<std::string>();
      }
      continue;
    }
    const json& e = *it;
    if (!e.is_object() || !e.contains("dtype") || !e.contains("shape") || !e.contains("data_offsets") ||
        !e["dtype"].is_string() || !e["shape"].is_array() || !e["data_offsets"].is_array() ||
        e["data_offsets"].size() != 2)
      throw fail("entry '" + name + "' lacks a dtype, shape or data_offsets");
    TensorRecord t;
    t.dtype = e["dtype"].get<std::string>();
    size_t elem;
    try {
      elem = safetensors_dtype_size(t.dtype);
    } catch (const Error&) {
      throw fail("entry '" + name + "' has unsupported dtype '" + t.dtype + "'");
    }
    uint64_t numel = 1;
    for (const json& s : e["shape"]) {
      if (!s.is_number_unsigned()) throw fail("entry '" + name + "' has a shape that is not a list of sizes");
      t.shape.push_back(s.get<int64_t>());
      numel *= s.get<uint64_t>();
    }
    const json& off = e["data_offsets"];
    if (!off[0].is_number_unsigned() || !off[1].is_number_unsigned())
      throw fail("entry '" + name + "' has non-numeric data_offsets");
    const uint64_t begin = off[0].get<uint64_t>(), end = off[1].get<uint64_t>();
    if (begin > end) throw fail("entry '" + name + "' has data_offsets out of order");
    if (end > data.size())
      throw fail("truncated (tensor '" + name + "' ends at byte " + std::to_string(end) + " of the data, file has " +
                 std::to_string(data.size()) + ")");
    if (end - begin != numel * elem)
      throw fail("entry '" + name + "' holds " + std::to_string(end - begin) + " bytes, its shape needs " +
                 std::to_string(numel * elem));
    t.data.assign(data.data() + begin, end - begin);
    ranges.emplace_back(begin, end);
    tensors.emplace(name, std::move(t));
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].second) throw fail("tensors overlap in the data");
  return tensors;
}

TensorMap read_safetensors(const std::string& path, std::map<std::string, std::string>* metadata) {
  const std::string bytes = read_file(path);
  return decode_safetensors(bytes, path, metadata);
}

void write_safetensors(const std::string& path, const TensorMap& tensors,
                       const std::map<std::string, std::string>& metadata) {
  write_file_atomic(path, encode_safetensors(tensors, metadata));
}

}  // namespace looplab
