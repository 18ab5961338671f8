// Prefix sums (paper B.1.1): each input is a bit string, target bit k is the parity of input
// bits 0..k. Data is made from a seed and stored as CSV with columns input,target (bit strings).
// No LibTorch here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace looplab::prefix_sums {

struct Dataset {
  int64_t bits = 0;
  std::vector<std::vector<uint8_t>> inputs;   // each of `bits` zeros and ones
  std::vector<std::vector<uint8_t>> targets;  // prefix parities
  size_t size() const { return inputs.size(); }
};

std::vector<uint8_t> prefix_parity(const std::vector<uint8_t>& input);

// `count` uniformly random bit strings of length `bits`, reproducible for a seed.
Dataset generate(int64_t bits, int64_t count, uint64_t seed);

void write_csv(const std::string& path, const Dataset& data);
// Validates every row: two columns, only 0/1, one length throughout, target = prefix parity.
// A bad row is a looplab::Error naming the file, line and field.
Dataset read_csv(const std::string& path);

}  // namespace looplab::prefix_sums
