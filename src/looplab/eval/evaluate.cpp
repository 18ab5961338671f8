#include "looplab/eval/evaluate.h"

#include "looplab/eval/readout.h"
#include "looplab/tasks/registry.h"
#include "looplab/util/error.h"
#include "looplab/model/relative_step.h"

namespace looplab {

CurveReport evaluate_curve(LoopedTransformerImpl& model, const Split& split, int64_t max_iters, int64_t batch,
                           const ProgressFn& progress) {
  CurveSums sums;
  return evaluate_curve(model, split, max_iters, batch, sums, nullptr, progress);
}

CurveReport evaluate_curve(LoopedTransformerImpl& model, const Split& split, int64_t max_iters, int64_t batch,
                           CurveSums& sums, const std::function<void(const CurveSums&)>& checkpoint,
                           const ProgressFn& progress) {
  torch::InferenceMode inference;
  const int64_t n = split.size();
  const auto iters = static_cast<size_t>(max_iters);
  if (sums.done == 0)
    for (auto* v : {&sums.exact, &sums.positions_right, &sums.step, &sums.unchanged}) v->assign(iters, 0.0);
  if (!sums.fits(n, max_iters))
    throw Error("evaluation sums of " + std::to_string(sums.exact.size()) + " iterations and " +
                std::to_string(sums.done) + " examples do not fit " + std::to_string(max_iters) + " iterations of " +
                std::to_string(n) + " examples");
  const Decoding decoding = task(model.config().task).spec().decoding;
  // Adds a batch's per-iteration counts [max_iters] to a sum, in double as the report's means.
  auto add = [](std::vector<double>& sum, const std::vector<torch::Tensor>& counts) {
    const torch::Tensor c = torch::stack(counts).to(torch::kCPU, torch::kFloat64).contiguous();
    const double* p = c.data_ptr<double>();
    for (size_t t = 0; t < sum.size(); ++t) sum[t] += p[t];
  };
  for (int64_t start = sums.done; start < n; start += batch) {
    const int64_t end = std::min(n, start + batch);
    const Loop loop(model, split.inputs.slice(0, start, end));
    const torch::Tensor target = split.targets.slice(0, start, end).to(model.device());
    torch::Tensor x = loop.x0();
    torch::Tensor previous = predict(loop.logits(x), decoding);
    if (fused_readout_applies(model, x)) {
      // The same counts in one pass per tile (eval/readout.h).
      loop.run(max_iters, [&](int64_t t, const torch::Tensor& next, const torch::Tensor&) {
        const ReadoutCounts c = fused_readout(model, x, next, target, previous, decoding);
        x = next;
        sums.exact[t - 1] += static_cast<double>(c.exact);
        sums.positions_right[t - 1] += static_cast<double>(c.positions_right);
        sums.step[t - 1] += c.step;
        sums.unchanged[t - 1] += static_cast<double>(c.unchanged);
      });
      sums.done = end;
      if (checkpoint) checkpoint(sums);
      if (progress) progress(end, n);
      continue;
    }
    std::vector<torch::Tensor> e, pos, s, u;
    loop.run(max_iters, [&](int64_t, const torch::Tensor& next, const torch::Tensor& logits) {
      s.push_back(relative_step(next, x).sum());
      x = next;
      const torch::Tensor prediction = predict(logits, decoding);
      const torch::Tensor right = prediction == target;
      e.push_back(right.all(1).sum());
      pos.push_back(right.sum());
      u.push_back((prediction == previous).all(1).sum());
      previous = prediction;
    }, {}, /*with_logits=*/true);
    add(sums.exact, e);
    add(sums.positions_right, pos);
    add(sums.step, s);
    add(sums.unchanged, u);
    sums.done = end;
    if (checkpoint) checkpoint(sums);
    if (progress) progress(end, n);
  }
  auto mean = [](const std::vector<double>& sum, double scale) {
    std::vector<double> m(sum.size());
    for (size_t t = 0; t < sum.size(); ++t) m[t] = sum[t] / scale;
    return m;
  };
  CurveReport curve;
  curve.count = n;
  curve.positions = split.inputs.size(1);
  for (int64_t t = 1; t <= max_iters; ++t) curve.iterations.push_back(t);
  const double examples = static_cast<double>(std::max<int64_t>(n, 1));
  curve.exact = mean(sums.exact, examples);
  curve.per_position = mean(sums.positions_right, examples * static_cast<double>(split.targets.size(1)));
  curve.relative_step = mean(sums.step, examples);
  curve.unchanged = mean(sums.unchanged, examples);
  return curve;
}

RightCounts count_right(LoopedTransformerImpl& model, const Split& split, int64_t iters, int64_t batch, int64_t lo,
                        int64_t hi) {
  torch::InferenceMode inference;
  if (hi < 0) hi = split.size();
  RightCounts c;
  for (int64_t start = lo; start < hi; start += batch) {
    const int64_t end = std::min(hi, start + batch);
    const auto out = model.forward(split.inputs.slice(0, start, end), iters);
    const torch::Tensor right = predict(out.logits, model) == split.targets.slice(0, start, end).to(model.device());
    c.exact += right.all(1).sum().item<int64_t>();
    c.positions_right += right.sum().item<int64_t>();
    c.positions += right.numel();
    c.examples += end - start;
  }
  return c;
}

Accuracy RightCounts::accuracy() const {
  if (examples == 0) return {};
  return {static_cast<double>(exact) / examples, static_cast<double>(positions_right) / positions};
}

Accuracy accuracy_after(LoopedTransformerImpl& model, const Split& split, int64_t iters, int64_t batch) {
  return count_right(model, split, iters, batch).accuracy();
}

PredictionTrace trace_prediction(LoopedTransformerImpl& model, const torch::Tensor& input, int64_t iters) {
  torch::InferenceMode inference;
  const Loop loop(model, input.unsqueeze(0));
  const Decoding decoding = task(model.config().task).spec().decoding;
  PredictionTrace trace;
  loop.run(iters, [&](int64_t t, const torch::Tensor&, const torch::Tensor& all_logits) {
    const torch::Tensor logits = all_logits[0].to(torch::kCPU, torch::kFloat32);
    const torch::Tensor classes = predict(logits, decoding).to(torch::kInt64).contiguous();
    trace.predictions.emplace_back(classes.data_ptr<int64_t>(), classes.data_ptr<int64_t>() + classes.numel());
    if (t == iters) trace.last_logits = logits;
    if (t > 1 && trace.predictions[t - 1] != trace.predictions[t - 2]) trace.unchanged_from = t;
  }, {}, /*with_logits=*/true);
  return trace;
}

std::string solve_query(LoopedTransformerImpl& model, const std::string& query, int64_t iters) {
  const Task& t = task(model.config().task);
  const Examples e = t.encode_query(query);
  const torch::Tensor input =
      torch::from_blob(const_cast<float*>(e.inputs.data()), {e.positions, e.channels}, torch::kFloat32).clone();
  const PredictionTrace trace = trace_prediction(model, input, iters);
  const torch::Tensor logits = trace.last_logits.contiguous();
  std::string out = t.describe_answer(query, trace.predictions.back(),
                                      std::vector<float>(logits.data_ptr<float>(), logits.data_ptr<float>() + logits.numel()),
                                      iters);
  if (trace.unchanged_from < iters || iters == 1)
    out += "prediction unchanged from iteration " + std::to_string(trace.unchanged_from) + " on\n";
  else
    out += "prediction still changing at iteration " + std::to_string(iters) + "\n";
  return out;
}

}  // namespace looplab
