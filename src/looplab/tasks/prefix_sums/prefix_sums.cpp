#include "looplab/tasks/prefix_sums/prefix_sums.h"

#include "looplab/io/atomic_file.h"
#include "looplab/io/csv.h"
#include "looplab/util/error.h"
#include "looplab/util/random.h"

namespace looplab::prefix_sums {

std::vector<uint8_t> prefix_parity(const std::vector<uint8_t>& input) {
  std::vector<uint8_t> out(input.size());
  uint8_t parity = 0;
  for (size_t i = 0; i < input.size(); ++i) out[i] = parity ^= input[i];
  return out;
}

Dataset generate(int64_t bits, int64_t count, uint64_t seed) {
  if (bits < 1 || count < 0) throw Error("prefix sums: bits must be >= 1 and count >= 0");
  Random rng(seed);
  Dataset d;
  d.bits = bits;
  for (int64_t i = 0; i < count; ++i) {
    std::vector<uint8_t> input(bits);
    for (auto& b : input) b = rng.bit();
    d.targets.push_back(prefix_parity(input));
    d.inputs.push_back(std::move(input));
  }
  return d;
}

namespace {

std::string bit_string(const std::vector<uint8_t>& bits) {
  std::string s(bits.size(), '0');
  for (size_t i = 0; i < bits.size(); ++i) s[i] = bits[i] ? '1' : '0';
  return s;
}

}  // namespace

void write_csv(const std::string& path, const Dataset& data) {
  std::string out = "input,target\n";
  out.reserve(out.size() + data.size() * (2 * data.bits + 2));
  for (size_t i = 0; i < data.size(); ++i) out += bit_string(data.inputs[i]) + "," + bit_string(data.targets[i]) + "\n";
  write_file_atomic(path, out);
}

Dataset read_csv(const std::string& path) {
  CsvReader csv(path, read_file(path), {"input", "target"});
  auto fail = [&](const std::string& why) { return Error(csv.where() + ": " + why); };
  Dataset d;
  while (csv.next()) {
    if (csv.field_count() != 2) throw fail("expected 2 fields (input,target), got " + std::to_string(csv.field_count()));
    auto parse_bits = [&](const char* field) {
      const std::string& s = csv.field(field);
      std::vector<uint8_t> bits(s.size());
      for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '0' && s[i] != '1')
          throw fail(std::string("field '") + field + "': character " + std::to_string(i + 1) + " is '" + s[i] +
                     "', expected 0 or 1");
        bits[i] = s[i] == '1';
      }
      if (bits.empty()) throw fail(std::string("field '") + field + "' is empty");
      return bits;
    };
    std::vector<uint8_t> input = parse_bits("input");
    std::vector<uint8_t> target = parse_bits("target");
    if (target.size() != input.size())
      throw fail("field 'target' has " + std::to_string(target.size()) + " bits, 'input' has " + std::to_string(input.size()));
    if (d.bits == 0) d.bits = static_cast<int64_t>(input.size());
    if (static_cast<int64_t>(input.size()) != d.bits)
      throw fail("field 'input' has " + std::to_string(input.size()) + " bits, earlier rows have " + std::to_string(d.bits));
    const auto want = prefix_parity(input);
    for (size_t i = 0; i < want.size(); ++i)
      if (want[i] != target[i])
        throw fail("field 'target': bit " + std::to_string(i + 1) + " is not the prefix parity of the input");
    d.inputs.push_back(std::move(input));
    d.targets.push_back(std::move(target));
  }
  if (d.size() == 0) throw Error(path + ": no examples after the header");
  return d;
}

}  // namespace looplab::prefix_sums
