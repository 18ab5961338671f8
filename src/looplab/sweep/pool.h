// The local pool of `looplab sweep run`: every run that is not done, N at a time, each in a
// process of its own (`looplab sweep exec`, so a crash or an out-of-memory kill takes one run,
// not the sweep), with one progress line for the whole sweep. Children die with the pool
// (PR_SET_PDEATHSIG), and a pool started again picks up where the folders say. No LibTorch.
#pragma once

#include <cstdint>
#include <string>

#include "looplab/sweep/sweep_file.h"

namespace looplab::sweep {

struct PoolOptions {
  int64_t workers = 1;
  int64_t threads_per_run = 1;
  std::string device = "cpu";
  std::string self;  // the looplab executable to run (default: this process's)
};

// Returns the number of runs that failed.
int64_t run_pool(const Sweep& sw, const PoolOptions& o);

}  // namespace looplab::sweep
