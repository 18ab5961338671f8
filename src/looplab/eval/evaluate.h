// Accuracy against iterations: how a looped model's answer evolves when it is run longer.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <vector>

#include "looplab/data/splits.h"
#include "looplab/model/looped_transformer.h"

namespace looplab {

// The model's answer from its logits [B, L, C_out] -> classes [B, L]: the most likely class per
// position, except for chess, whose answer is a move: class 1 on the two squares with the
// largest class-1 logits, 0 elsewhere (SPEC section 3).
torch::Tensor predict(const torch::Tensor& logits, const std::string& task);

// Per iteration t = 1..max_iters, averaged over the split's examples.
struct IterationCurve {
  int64_t count = 0;
  std::vector<double> exact;          // fraction of examples with every position right
  std::vector<double> per_position;   // fraction of positions right
  std::vector<double> relative_step;  // mean over examples of ||x_t - x_{t-1}|| / ||x_{t-1}||
  std::vector<double> unchanged;      // fraction of examples whose prediction equals that of t-1
};

// `progress(done, total)` is called after each batch when given.
IterationCurve evaluate_curve(LoopedTransformerImpl& model, const Split& split, int64_t max_iters, int64_t batch,
                              const std::function<void(int64_t, int64_t)>& progress = nullptr);

// Accuracy after exactly `iters` iterations: the fraction of examples with every position
// right, and of positions right.
struct Accuracy {
  double exact = 0, per_position = 0;
};
Accuracy accuracy_after(LoopedTransformerImpl& model, const Split& split, int64_t iters, int64_t batch);
inline double exact_accuracy(LoopedTransformerImpl& model, const Split& split, int64_t iters, int64_t batch) {
  return accuracy_after(model, split, iters, batch).exact;
}

// One input run for `iters` iterations, the way a user inspects a single answer.
struct PredictionTrace {
  std::vector<std::vector<int64_t>> predictions;  // [iteration t-1][position]: argmax class after t
  torch::Tensor last_logits;                      // [L, C_out] after the last iteration, on the CPU
  // The first iteration from which the prediction never changes again up to `iters`.
  int64_t settled_at = 1;
};
// input: [L, C_in] (one example, no batch axis).
PredictionTrace trace_prediction(LoopedTransformerImpl& model, const torch::Tensor& input, int64_t iters);

}  // namespace looplab
