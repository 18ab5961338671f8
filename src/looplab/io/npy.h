// Reading numpy's .npy files (the easy-to-hard data set's inputs.npy and solutions.npy) through
// Debian's xtensor (libxtensor-dev, xt::detail::load_npy_file): the header and the bytes are
// xtensor's; what is added here is what it leaves to the caller: a file cut short, a dtype other
// than the one asked for, and every error naming the file. No LibTorch here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace looplab {

struct NpyArray {
  std::vector<int64_t> shape;   // C order (a Fortran-order file is refused)
  std::vector<float> values;    // every element converted to float
  std::string dtype;            // the file's, e.g. "<f8", "|u1"
};

// The array of `path`, of any of the dtypes float64, float32, uint8, bool, int64 and int32
// (little-endian), converted to float. Throws looplab::Error naming the file and what is wrong:
// not a .npy file, a dtype or layout not read here, fewer bytes than its shape needs.
NpyArray read_npy(const std::string& path);

// Writes `values` of `shape` as a float32 C-order .npy file (tests and `looplab data mazes --npy`),
// to a temporary name renamed into place.
void write_npy(const std::string& path, const std::vector<int64_t>& shape, const std::vector<float>& values);

}  // namespace looplab
