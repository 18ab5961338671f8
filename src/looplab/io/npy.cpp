#include "looplab/io/npy.h"

#include <cstring>
#include <fstream>
#include <sstream>
#include <xtensor/xadapt.hpp>
#include <xtensor/xnpy.hpp>

#include "looplab/io/atomic_file.h"
#include "looplab/util/error.h"

namespace looplab {

namespace {

template <typename T>
void convert(const char* bytes, size_t n, std::vector<float>& out) {
  out.resize(n);
  for (size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, bytes + i * sizeof(T), sizeof(T));
    out[i] = static_cast<float>(v);
  }
}

}  // namespace

NpyArray read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open");
  // xtensor 0.24 reads a version-1 header's length with its low byte sign-extended: a length
  // whose low byte is 128 or more would be misread. numpy pads headers to 118 bytes for the
  // data set's arrays; any other such length is refused here rather than misread.
  char head[10] = {};
  in.read(head, 10);
  if (in && head[6] == 1 && static_cast<unsigned char>(head[8]) >= 128)
    throw Error(path + ": a .npy header of " +
                std::to_string(static_cast<unsigned char>(head[8]) + 256 * static_cast<unsigned char>(head[9])) +
                " bytes, which this reader (xtensor 0.24) cannot read exactly");
  in.clear();
  in.seekg(0);
  xt::detail::npy_file file = [&] {
    try {
      return xt::detail::load_npy_file(in);
    } catch (const std::exception& e) {
      throw Error(path + ": not a .npy file numpy wrote (" + e.what() + ")");
    }
  }();
  // load_npy_file reads the data without checking that it was all there.
  if (!in) throw Error(path + ": cut short: its shape needs " + std::to_string(file.m_n_bytes) + " bytes of data");
  if (file.m_fortran_order) throw Error(path + ": a Fortran-order array (only C order is read)");
  NpyArray a;
  a.dtype = file.m_typestring;
  size_t n = 1;
  for (size_t s : file.m_shape) {
    a.shape.push_back(static_cast<int64_t>(s));
    n *= s;
  }
  const char* bytes = file.ptr();
  const std::string& t = a.dtype;
  if (t == "<f8") convert<double>(bytes, n, a.values);
  else if (t == "<f4") convert<float>(bytes, n, a.values);
  else if (t == "|u1") convert<uint8_t>(bytes, n, a.values);
  else if (t == "|b1") convert<uint8_t>(bytes, n, a.values);
  else if (t == "<i8") convert<int64_t>(bytes, n, a.values);
  else if (t == "<i4") convert<int32_t>(bytes, n, a.values);
  else throw Error(path + ": dtype '" + t + "' (read here: <f8, <f4, |u1, |b1, <i8, <i4)");
  return a;
}

void write_npy(const std::string& path, const std::vector<int64_t>& shape, const std::vector<float>& values) {
  std::vector<size_t> s(shape.begin(), shape.end());
  const auto view = xt::adapt(values.data(), values.size(), xt::no_ownership(), s);
  write_file_atomic(path, xt::dump_npy(view));
}

}  // namespace looplab
