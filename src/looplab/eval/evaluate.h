// Accuracy against iterations: how a looped model's answer evolves when it is run longer.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <string>
#include <vector>

#include "looplab/data/splits.h"
#include "looplab/eval/readout.h"  // predict
#include "looplab/model/looped_transformer.h"
#include "looplab/run/reports.h"
#include "looplab/tasks/task.h"

namespace looplab {

// `progress(done, total)` is called after each batch when given.
using ProgressFn = std::function<void(int64_t, int64_t)>;

// Per iteration t = 1..max_iters, averaged over the split's examples (iterations 1..max_iters).
CurveReport evaluate_curve(LoopedTransformerImpl& model, const Split& split, int64_t max_iters, int64_t batch,
                           const ProgressFn& progress = nullptr);

// The sums over examples [0, done) behind a CurveReport: what a stopped evaluation keeps so
// that it can go on from its last batch (stages/stages.h keeps them in DIR/eval.partial.json).
struct CurveSums {
  int64_t done = 0;
  // per iteration 1..max_iters: examples exact, positions right, relative steps, unchanged answers
  std::vector<double> exact, positions_right, step, unchanged;
  // Whether these sums can be gone on with for a split of `examples` and `iters` iterations.
  bool fits(int64_t examples, int64_t iters) const {
    if (done < 0 || done > examples) return false;
    if (done == 0) return true;
    for (const auto* v : {&exact, &positions_right, &step, &unchanged})
      if (v->size() != static_cast<size_t>(iters)) return false;
    return true;
  }
};
// The resumable form: counts on from `sums` (empty: from the first example; else as the same
// call with the same batch left it) and calls `checkpoint(sums)` after each batch. The report
// equals the uninterrupted one's exactly. Throws Error when `sums` does not fit the split.
CurveReport evaluate_curve(LoopedTransformerImpl& model, const Split& split, int64_t max_iters, int64_t batch,
                           CurveSums& sums, const std::function<void(const CurveSums&)>& checkpoint,
                           const ProgressFn& progress = nullptr);

// Accuracy after exactly `iters` iterations: the fraction of examples with every position
// right, and of positions right.
struct Accuracy {
  double exact = 0, per_position = 0;
};
Accuracy accuracy_after(LoopedTransformerImpl& model, const Split& split, int64_t iters, int64_t batch);
// The counts behind it for the examples [lo, hi) of the split (hi < 0: to its end), which
// data-parallel ranks sum before dividing.
struct RightCounts {
  int64_t examples = 0, exact = 0, positions = 0, positions_right = 0;
  Accuracy accuracy() const;
};
RightCounts count_right(LoopedTransformerImpl& model, const Split& split, int64_t iters, int64_t batch, int64_t lo = 0,
                        int64_t hi = -1);
inline double exact_accuracy(LoopedTransformerImpl& model, const Split& split, int64_t iters, int64_t batch) {
  return accuracy_after(model, split, iters, batch).exact;
}

// One input run for `iters` iterations, the way a user inspects a single answer.
struct PredictionTrace {
  std::vector<std::vector<int64_t>> predictions;  // [iteration t-1][position]: the answer after t
  torch::Tensor last_logits;                      // [L, C_out] after the last iteration, on the CPU
  // The first iteration from which the answer never changes again up to `iters`.
  int64_t unchanged_from = 1;
};
// input: [L, C_in] (one example, no batch axis).
PredictionTrace trace_prediction(LoopedTransformerImpl& model, const torch::Tensor& input, int64_t iters);

// `looplab solve`: the model's answer to one query of its task (tasks/task.h, solve_option),
// as the task prints it, and when the answer stopped changing.
std::string solve_query(LoopedTransformerImpl& model, const std::string& query, int64_t iters);

}  // namespace looplab
