#include "looplab/eval/evaluate.h"

#include "looplab/tasks/registry.h"

namespace looplab {

torch::Tensor predict(const torch::Tensor& logits, Decoding decoding) {
  if (decoding == Decoding::kArgmax) return logits.argmax(-1);
  const torch::Tensor top2 = std::get<1>(logits.select(-1, 1).topk(2, -1));
  return torch::zeros(logits.sizes().slice(0, logits.dim() - 1), logits.options().dtype(torch::kInt64))
      .scatter_(-1, top2, 1);
}

torch::Tensor predict(const torch::Tensor& logits, const LoopedTransformerImpl& model) {
  return predict(logits, task(model.config().task).spec().decoding);
}

CurveReport evaluate_curve(LoopedTransformerImpl& model, const Split& split, int64_t max_iters, int64_t batch,
                           const ProgressFn& progress) {
  torch::InferenceMode inference;
  const auto acc_options = torch::TensorOptions().dtype(torch::kFloat64);
  torch::Tensor exact = torch::zeros({max_iters}, acc_options), positions = torch::zeros({max_iters}, acc_options);
  torch::Tensor step = torch::zeros({max_iters}, acc_options), unchanged = torch::zeros({max_iters}, acc_options);
  const int64_t n = split.size();
  const Decoding decoding = task(model.config().task).spec().decoding;
  for (int64_t start = 0; start < n; start += batch) {
    const int64_t end = std::min(n, start + batch);
    const Loop loop(model, split.inputs.slice(0, start, end));
    const torch::Tensor target = split.targets.slice(0, start, end).to(model.device());
    torch::Tensor x = loop.x0();
    torch::Tensor previous = predict(loop.logits(x), decoding);
    std::vector<torch::Tensor> e, pos, s, u;
    loop.run(max_iters, [&](int64_t, const torch::Tensor& next, const torch::Tensor& logits) {
      s.push_back(((next - x).flatten(1).norm(2, 1) / x.flatten(1).norm(2, 1)).sum().to(torch::kFloat64));
      x = next;
      const torch::Tensor prediction = predict(logits, decoding);
      const torch::Tensor right = prediction == target;
      e.push_back(right.all(1).sum());
      pos.push_back(right.sum());
      u.push_back((prediction == previous).all(1).sum());
      previous = prediction;
    }, {}, /*with_logits=*/true);
    exact += torch::stack(e).to(torch::kCPU, torch::kFloat64);
    positions += torch::stack(pos).to(torch::kCPU, torch::kFloat64);
    step += torch::stack(s).to(torch::kCPU);
    unchanged += torch::stack(u).to(torch::kCPU, torch::kFloat64);
    if (progress) progress(end, n);
  }
  auto to_vector = [](const torch::Tensor& t, double scale) {
    const torch::Tensor c = (t / scale).contiguous();
    return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
  };
  CurveReport curve;
  curve.count = n;
  curve.positions = split.inputs.size(1);
  for (int64_t t = 1; t <= max_iters; ++t) curve.iterations.push_back(t);
  const double examples = static_cast<double>(std::max<int64_t>(n, 1));
  curve.exact = to_vector(exact, examples);
  curve.per_position = to_vector(positions, examples * split.targets.size(1));
  curve.relative_step = to_vector(step, examples);
  curve.unchanged = to_vector(unchanged, examples);
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
