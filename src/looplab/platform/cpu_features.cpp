#include "looplab/platform/cpu_features.h"

#include <cpuid.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <utility>

namespace looplab {

namespace {

uint64_t xgetbv0() {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

}  // namespace

CpuFeatures cpu_features() {
  CpuFeatures f;
  unsigned a, b, c, d;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return f;
  const unsigned max_leaf = a;
  char vendor[13] = {};
  std::memcpy(vendor, &b, 4), std::memcpy(vendor + 4, &d, 4), std::memcpy(vendor + 8, &c, 4);
  f.vendor = vendor;
  __get_cpuid(1, &a, &b, &c, &d);
  f.sse3 = c & 1;
  f.fma = c & (1u << 12);
  const bool osxsave = c & (1u << 27);
  const uint64_t xcr0 = osxsave ? xgetbv0() : 0;
  const bool os_avx = (xcr0 & 0x6) == 0x6, os_avx512 = (xcr0 & 0xe6) == 0xe6;
  f.avx = (c & (1u << 28)) && os_avx;
  f.fma = f.fma && os_avx;
  if (max_leaf >= 7) {
    __cpuid_count(7, 0, a, b, c, d);
    f.avx2 = (b & (1u << 5)) && os_avx;
    f.avx512f = (b & (1u << 16)) && os_avx512;
    f.avx512bw = (b & (1u << 30)) && os_avx512;
    f.avx512vl = (b & (1u << 31)) && os_avx512;
    f.avx512_fp16 = (d & (1u << 23)) && os_avx512;
    f.amx = d & (1u << 24);
    __cpuid_count(7, 1, a, b, c, d);
    f.avx512_bf16 = (a & (1u << 5)) && os_avx512;
  }
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);)
    if (line.rfind("model name", 0) == 0) {
      f.model = line.substr(line.find(':') + 2);
      break;
    }
  return f;
}

std::vector<std::string> feature_names(const CpuFeatures& f) {
  std::vector<std::string> out;
  for (const auto& [on, name] : std::vector<std::pair<bool, const char*>>{{f.sse3, "sse3"},
                                                                          {f.avx, "avx"},
                                                                          {f.avx2, "avx2"},
                                                                          {f.fma, "fma"},
                                                                          {f.avx512f, "avx512f"},
                                                                          {f.avx512bw, "avx512bw"},
                                                                          {f.avx512vl, "avx512vl"},
                                                                          {f.avx512_bf16, "avx512_bf16"},
                                                                          {f.avx512_fp16, "avx512_fp16"},
                                                                          {f.amx, "amx"}})
    if (on) out.push_back(name);
  return out;
}

}  // namespace looplab
