// What the process costs: peak resident memory. No LibTorch.
#pragma once

#include <sys/resource.h>

namespace looplab {

// Peak resident memory of this process in MiB (ru_maxrss is in KiB on Linux).
inline double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

}  // namespace looplab
