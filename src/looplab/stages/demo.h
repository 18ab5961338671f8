// looplab demo: the shipped models of the task's demo (tasks/task.h; the paper's central
// contrast) run for up to `iters` iterations on val and hard inputs side by side, the paper's
// configuration's seeds where they are shipped, then a short training run that shows training at work.
// Prints to stdout as it goes.
#pragma once

#include <cstdint>
#include <string>

namespace looplab {

struct DemoOptions {
  std::string models = "models";          // --models: the folder of the shipped run folders
  int64_t val_count = 500;                // --val-count
  int64_t hard_count = 50;                // --hard-count
  int64_t iters = 500;                    // --iters: the most test iterations
  // --paper-val-count, --paper-hard-count: examples per seed of the paper's configuration (0: do
  // not show the seeds; -1: the task's demo's counts, 30 and 6 for prefix sums).
  int64_t paper_val_count = -1, paper_hard_count = -1;
  int64_t live_epochs = -1;               // --live-epochs: the live run's (0: skip; -1: the demo's)
  std::string live_dir = "runs/demo-live";  // --live-dir: replaced
  std::string precision = "float32";      // --precision of the live run: float32 or bf16-mixed
};

// Throws looplab::Error for bad counts or a missing model folder.
void run_demo(const DemoOptions& o);

}  // namespace looplab
