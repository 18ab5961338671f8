// Small numeric helpers shared by the illustrations, the geometry and the reports. No LibTorch.
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
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

// The median of v (the mean of the middle two for an even count); 0 for none.
template <typename T>
double median(std::vector<T> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? static_cast<double>(v[n / 2]) : 0.5 * (static_cast<double>(v[n / 2 - 1]) + static_cast<double>(v[n / 2]));
}

// The mean of v and its standard error, the sample standard deviation (n - 1) over sqrt(n); the
// error is 0 for one value, both are 0 for none.
struct MeanAndError {
  double mean = 0, standard_error = 0;
};
inline MeanAndError mean_and_standard_error(const std::vector<double>& v) {
  MeanAndError m;
  if (v.empty()) return m;
  for (double x : v) m.mean += x;
  m.mean /= static_cast<double>(v.size());
  if (v.size() > 1) {
    double ss = 0;
    for (double x : v) ss += (x - m.mean) * (x - m.mean);
    m.standard_error = std::sqrt(ss / static_cast<double>(v.size() - 1)) / std::sqrt(static_cast<double>(v.size()));
  }
  return m;
}

// The shortest text that reads back to the same double, in printf's %g style (3e-4 -> "0.0003",
// 1e5 -> "1e+05"): std::to_chars's general format without a precision.
inline std::string shortest_text(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general);
  return std::string(buf, r.ptr);
}

// shortest_text for tables and CSV: "0" for either zero, "nan" for any NaN.
inline std::string number_text(double v) {
  if (std::isnan(v)) return "nan";
  return v == 0 ? "0" : shortest_text(v);
}

// v with `places` decimals (printf's %.*f).
inline std::string fixed_text(double v, int places) {
  char buf[512];  // the largest double has 309 digits before the point
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, places);
  return r.ec == std::errc() ? std::string(buf, r.ptr) : std::string("inf");
}

}  // namespace looplab
