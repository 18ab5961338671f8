// looplab's random numbers: a seeded 64-bit Mersenne Twister with draws written out here, so a
// seed gives the same data, shuffles and n/k draws with every compiler and standard library
// (std::uniform_int_distribution is implementation-defined).
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace looplab {

class Random {
 public:
  explicit Random(uint64_t seed) : engine_(seed) {}

  // The seed of item `stream` of a seeded collection (SplitMix64 of both), so item i is the same
  // whichever thread makes it and in whatever order.
  static uint64_t stream_seed(uint64_t seed, uint64_t stream) {
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + stream + 0x632BE59BD9B4E019ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  // Uniform integer in [lo, hi] (the modulo bias of a 64-bit draw is below 1e-15 here).
  int64_t uniform_int(int64_t lo, int64_t hi) {
    const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
    return lo + static_cast<int64_t>(engine_() % span);
  }
  bool bit() { return (engine_() >> 63) != 0; }

  // A random permutation of 0..n-1 (Fisher-Yates).
  std::vector<int64_t> permutation(int64_t n) {
    std::vector<int64_t> p(n);
    for (int64_t i = 0; i < n; ++i) p[i] = i;
    for (int64_t i = n - 1; i > 0; --i) std::swap(p[i], p[uniform_int(0, i)]);
    return p;
  }

  // A pair of independent N(0, 1) draws by Box-Muller, written out here so that a seed gives the
  // same numbers with every standard library (up to the last-bit accuracy of log, sin and cos):
  // two words give the uniforms u1, u2 (uniform_from_word), and the pair is
  // sqrt(-2 ln u1) (cos 2 pi u2, sin 2 pi u2).
  std::pair<double, double> normal_pair() {
    const double u1 = uniform_from_word(engine_()), u2 = uniform_from_word(engine_());
    const double r = std::sqrt(-2 * std::log(u1)), theta = 2 * 3.14159265358979323846 * u2;
    return {r * std::cos(theta), r * std::sin(theta)};
  }
  // The uniform ((w >> 11) + 1) / 2^53 in (0, 1] of a 64-bit word.
  static double uniform_from_word(uint64_t w) {
    return static_cast<double>((w >> 11) + 1) * (1.0 / 9007199254740992.0);
  }

  // The full engine state as text, for resuming a run exactly.
  std::string state() const {
    std::ostringstream out;
    out << engine_;
    return out.str();
  }
  void set_state(const std::string& s) {
    std::istringstream in(s);
    in >> engine_;
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace looplab
