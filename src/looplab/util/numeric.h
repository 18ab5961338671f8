// Small numeric helpers shared by the illustrations, the geometry and the reports. No LibTorch.
#pragma once

#include <cstdint>
#include <vector>

namespace looplab {

// n evenly spaced values from a to b inclusive, a + (b - a) i / (n - 1), with both ends exactly a
// and b. n = 1 gives the midpoint (a one-point grid over [a, b] sits at its centre; numpy gives
// a), n = 0 nothing.
inline std::vector<double> linspace(double a, double b, int64_t n) {
  std::vector<double> v(n > 0 ? n : 0);
  if (n == 1) v[0] = 0.5 * (a + b);
  if (n < 2) return v;
  for (int64_t i = 0; i < n; ++i) v[i] = a + (b - a) * static_cast<double>(i) / static_cast<double>(n - 1);
  v[0] = a;
  v[n - 1] = b;
  return v;
}

}  // namespace looplab
