#include "looplab/eval/evaluate.h"

namespace looplab {

torch::Tensor predict(const torch::Tensor& logits, const std::string& task) {
  if (task != "chess") return logits.argmax(-1);
  const torch::Tensor top2 = std::get<1>(logits.select(-1, 1).topk(2, -1));
  return torch::zeros(logits.sizes().slice(0, logits.dim() - 1), logits.options().dtype(torch::kInt64))
      .scatter_(-1, top2, 1);
}

IterationCurve evaluate_curve(LoopedTransformerImpl& model, const Split& split, int64_t max_iters, int64_t batch,
                              const std::function<void(int64_t, int64_t)>& progress) {
  torch::InferenceMode inference;
  const auto acc_options = torch::TensorOptions().dtype(torch::kFloat64);
  torch::Tensor exact = torch::zeros({max_iters}, acc_options), positions = torch::zeros({max_iters}, acc_options);
  torch::Tensor step = torch::zeros({max_iters}, acc_options), unchanged = torch::zeros({max_iters}, acc_options);
  const int64_t n = split.size();
  const Positions p = model.positions(model.grid_for(split.inputs.size(1)));
  for (int64_t start = 0; start < n; start += batch) {
    const int64_t end = std::min(n, start + batch);
    const torch::Tensor input = split.inputs.slice(0, start, end).to(model.device(), model.dtype());
    const torch::Tensor target = split.targets.slice(0, start, end).to(model.device());
    const torch::Tensor x0 = model.embed(input);
    const auto r = model.recall_input(x0);
    torch::Tensor x = x0;
    const std::string& task = model.config().task;
    torch::Tensor previous = predict(model.readout(x), task);
    std::vector<torch::Tensor> e, pos, s, u;
    for (int64_t t = 0; t < max_iters; ++t) {
      const torch::Tensor next = model.iterate(x, r, p);
      s.push_back(((next - x).flatten(1).norm(2, 1) / x.flatten(1).norm(2, 1)).sum().to(torch::kFloat64));
      x = next;
      const torch::Tensor prediction = predict(model.readout(x), task);
      const torch::Tensor right = prediction == target;
      e.push_back(right.all(1).sum());
      pos.push_back(right.sum());
      u.push_back((prediction == previous).all(1).sum());
      previous = prediction;
    }
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
  IterationCurve curve;
  curve.count = n;
  const double examples = static_cast<double>(std::max<int64_t>(n, 1));
  curve.exact = to_vector(exact, examples);
  curve.per_position = to_vector(positions, examples * split.targets.size(1));
  curve.relative_step = to_vector(step, examples);
  curve.unchanged = to_vector(unchanged, examples);
  return curve;
}

Accuracy accuracy_after(LoopedTransformerImpl& model, const Split& split, int64_t iters, int64_t batch) {
  torch::InferenceMode inference;
  int64_t exact = 0, positions = 0;
  for (int64_t start = 0; start < split.size(); start += batch) {
    const int64_t end = std::min(split.size(), start + batch);
    const auto out = model.forward(split.inputs.slice(0, start, end), iters);
    const torch::Tensor right = predict(out.logits, model.config().task) == split.targets.slice(0, start, end).to(model.device());
    exact += right.all(1).sum().item<int64_t>();
    positions += right.sum().item<int64_t>();
  }
  if (split.size() == 0) return {};
  return {static_cast<double>(exact) / split.size(), static_cast<double>(positions) / split.targets.numel()};
}

PredictionTrace trace_prediction(LoopedTransformerImpl& model, const torch::Tensor& input, int64_t iters) {
  torch::InferenceMode inference;
  const Positions p = model.positions(model.grid_for(input.size(0)));
  const torch::Tensor x0 = model.embed(input.unsqueeze(0).to(model.device(), model.dtype()));
  const auto r = model.recall_input(x0);
  torch::Tensor x = x0;
  PredictionTrace trace;
  for (int64_t t = 1; t <= iters; ++t) {
    x = model.iterate(x, r, p);
    const torch::Tensor logits = model.readout(x)[0].to(torch::kCPU, torch::kFloat32);
    const torch::Tensor classes = predict(logits, model.config().task).to(torch::kInt64).contiguous();
    trace.predictions.emplace_back(classes.data_ptr<int64_t>(), classes.data_ptr<int64_t>() + classes.numel());
    if (t == iters) trace.last_logits = logits;
    if (t > 1 && trace.predictions[t - 1] != trace.predictions[t - 2]) trace.settled_at = t;
  }
  return trace;
}

}  // namespace looplab
