// The readout: how a model's logits become an answer (predict, by the task's decoding), and the
// evaluation's readout of one iteration fused on the CPU.
//
// The fused readout (issue 32): what `looplab eval` records at
// every iteration (the head's answer on x_t against the target and against the previous answer,
// and the relative step ||x_t - x_{t-1}|| / ||x_{t-1}||) cost as much as the iteration itself on
// the plain path: about fifteen LibTorch operations, each a pass over the whole batch (the
// head's RMSNorm alone is five). Here each thread takes whole examples and runs the head on
// their rows in tiles that stay in its cache: the RMSNorm and the step's sums in one pass over
// the rows, the head's two linear layers as single-threaded products, GELU (row_math.h's erf) on the
// tile, then the decoding and the comparisons per row. CPU float32 only (bf16-mixed included); elsewhere the plain
// path (eval/evaluate.cpp). tests/train/evaluate_test.cpp checks the one against the other.
#pragma once

#include <torch/torch.h>

#include <cstdint>

#include "looplab/tasks/task.h"

namespace looplab {

class LoopedTransformerImpl;

// The answer from logits [..., L, C_out] -> classes [..., L] by the task's decoding
// (tasks/task.h): the most likely class per position (kArgmax), or class 1 on the two positions
// with the largest class-1 logits (kTopTwoMove). An answer is exact when every position equals
// the target. fused_readout decodes its rows by the same rule, written out in its row loop (readout.cpp;
// tests/train/evaluate_test.cpp checks the two against each other).
torch::Tensor predict(const torch::Tensor& logits, Decoding decoding);
// The decoding of the model's task.
torch::Tensor predict(const torch::Tensor& logits, const LoopedTransformerImpl& model);

// Counts over the examples of a batch after one iteration.
struct ReadoutCounts {
  int64_t exact = 0;      // examples with every position right
  int64_t positions_right = 0;
  int64_t unchanged = 0;  // examples whose answer equals the previous one
  double step = 0;        // the sum over examples of the relative step
};

// Whether fused_readout can read out this model's states x [B, L, d]: CPU float32 (under
// bf16-mixed too: the head's products are then bfloat16 as the block's), no PlainEngine scope
// (LOOPLAB_ENGINE=plain keeps the plain path here too).
bool fused_readout_applies(const LoopedTransformerImpl& model, const torch::Tensor& x);

// After iteration t: `state` is x_t, `previous_state` x_{t-1} [B, L, d]; `target` [B, L] int64;
// `prediction` [B, L] int64 holds the answer after t - 1 and receives the answer after t, by the
// task's decoding (predict's rule).
ReadoutCounts fused_readout(const LoopedTransformerImpl& model, const torch::Tensor& previous_state,
                            const torch::Tensor& state, const torch::Tensor& target, torch::Tensor& prediction,
                            Decoding decoding);

}  // namespace looplab
