// looplab's benchmarks as a library: `looplab bench block|step|latency|eval` call it
// (cli/cmd_bench.cpp maps their flags to the options below), and bench/run reads what they
// print. Each run_* prints its report to stdout; step, latency and eval end with one line
// `json: {...}` per measurement, the line bench/run parses.
//
//  - block: the machine's matrix-product speed and the cost of one iteration of a block at
//    paper width, measured in one process so the figures compare.
//  - step: a training step with fixed n and k (time, model FLOP/s against the same process's
//    matmul, peak RSS).
//  - latency: one iteration at batch 1, and the floor of its dense-layer products alone.
//  - eval: a model folder evaluated by plain iteration, early exit and Anderson.
// A task's benchmarks of its own code come from the task (tasks/task.h: benchmarks(), e.g.
// `looplab bench sudoku`).
//
// Bad option values are a looplab::Error (the benchmarks are command-line tools: their messages
// name the flag).
#pragma once

#include "looplab/platform/runtime.h"
#include "looplab/tasks/task.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "looplab/model/looped_transformer.h"

namespace looplab::bench {

// Timing (sync_device, sorted_seconds, median_seconds) and the 2048^3 product (matmul_seconds,
// matmul_gflops): runtime.h.

// ---- The model's FLOPs --------------------------------------------------------------------

// Matrix-product FLOPs of one iteration and of the head, per token (multiply-add = 2): the
// model as SPEC section 1 defines it (neighbourhood attention: `window` keys per query, the
// useful ones, even where it is computed as a masked dense product).
struct FlopCount {
  double iteration = 0, head = 0;
  double recall_input = 0;  // Wh x0: once per forward pass, not per iteration (Loop)
};
FlopCount model_flops(const ModelConfig& c, int64_t positions);

// ---- A synthetic model and batch ----------------------------------------------------------

// A freshly initialized model of the task's default configuration (torch seed 0) and a batch
// of the task's synthetic examples (Task::synthetic: inputs of the task's form).
struct SyntheticOptions {
  std::string task = "prefix-sums", recall = "external", norm = "post", device = "cpu", dtype = "float32";
  std::string precision = "float32";  // or bf16-mixed (runtime.h)
  int64_t width = 256, heads = 8;
  int64_t positions = 32;  // tasks of any length only; the others take their grid's product
  int64_t batch = 500;
};
struct Synthetic {
  LoopedTransformer model{nullptr};
  torch::Tensor input, target;  // [batch, positions, C_in] in the model's dtype; [batch, positions]
  int64_t positions = 0;
  torch::Device device = torch::kCPU;
  torch::Dtype dtype = torch::kFloat32;
};
Synthetic synthetic_setup(const SyntheticOptions& o);

// ---- The benchmarks -----------------------------------------------------------------------

// The 2048^3 product and one iteration of the block, without gradient and with backward
// (default: external recall, paper width, 100 x 81 sudoku tokens).
struct BlockOptions {
  SyntheticOptions model;
  int64_t reps = 5;  // timed repetitions (median reported)
  BlockOptions() {
    model.task = "sudoku";
    model.batch = 100;
  }
};
void run_block(const BlockOptions& o);

// One training step (progressive_backward, gradient clipping, AdamW) with fixed n and k of an
// external-recall post-norm model.
struct StepOptions {
  SyntheticOptions model;
  int64_t n = 2, k = 2;         // iterations without and with gradient
  int64_t reps = 3, warmup = 1;  // timed steps (median reported), untimed steps first
  bool recompute = false;        // recompute activations in the backward pass (as train --recompute)
  bool no_matmul = false;        // skip the matmul measurement (peak RSS runs)
  // After the timing, count the ATen operators (op_count.h) of one block iteration in three
  // phases (forward without gradient, forward with gradient, backward: each the difference
  // between 2 iterations and 1) and of one whole step; "ops" in the JSON line.
  bool count_ops = false;
};
void run_step(const StepOptions& o);

// One iteration at batch 1 in inference mode, and the same iteration's dense-layer products
// alone (the floor of any implementation that runs them through this BLAS).
struct LatencyOptions {
  SyntheticOptions model;
  int64_t reps = 200;  // timed iterations (median reported)
  LatencyOptions() { model.batch = 1; }
};
void run_latency(const LatencyOptions& o);

// A model or run folder's split evaluated once per mode: "plain" (max_iters iterations),
// "early" (early exit at the tolerance) and "anderson" (Anderson memory + early exit).
struct EvalOptions {
  std::string dir, split = "hard", weights = "best", device = "cpu", dtype = "float32";
  std::vector<std::string> modes = {"plain", "early", "anderson"};
  int64_t count = 200, batch = 100, iters = 500, anderson = 5;
  double tolerance = 1e-3;
};
void run_eval(const EvalOptions& o);

}  // namespace looplab::bench
