// The benchmarks of bench/bench.h. Output lines are bench/run's input: keep their form.
#include "bench/bench.h"
#include "bench/op_count.h"

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <utility>

#include "looplab/data/splits.h"
#include "looplab/distributed/environment.h"
#include "looplab/distributed/ranks.h"
#include "looplab/eval/accelerated.h"
#include "looplab/run/model_folder.h"
#include "looplab/run/run_folder.h"
#include "looplab/platform/runtime.h"
#include "looplab/tasks/registry.h"
#include "looplab/train/adamw.h"
#include "looplab/train/progressive_loss.h"
#include "looplab/util/error.h"
#include "looplab/util/system.h"

namespace looplab::bench {

// ---- Helpers ------------------------------------------------------------------------------


FlopCount model_flops(const ModelConfig& c, int64_t positions) {
  const double d = static_cast<double>(c.width);
  double keys = static_cast<double>(positions);
  if (c.neighbourhood_attention) {
    keys = 1;
    for (size_t a = 0; a < c.grid.size(); ++a)
      keys *= static_cast<double>(std::min<int64_t>(c.window, c.grid.size() == 1 ? positions : c.grid[a]));
  }
  const double attention = 2 * (3 * d * d + d * d) + 2 * 2 * keys * d;
  const double mlp = 2 * 2 * static_cast<double>(c.mlp_ratio) * d * d;
  double recall = 0;  // Wx x per use of g
  if (c.recall == Recall::kExternal) recall = 2 * d * d;
  if (c.recall == Recall::kInternal) recall = 2 * 2 * d * d;  // one g per sublayer
  const double gru = c.norm == Norm::kGru ? 2 * 2 * 2 * 3 * d * d : 0;
  FlopCount f;
  f.iteration = static_cast<double>(c.blocks) * (attention + mlp + recall + gru);
  f.head = 2 * (d * d + d * static_cast<double>(c.out_channels)) + 2 * static_cast<double>(c.in_channels) * d;
  if (c.recall == Recall::kExternal || c.recall == Recall::kInternal)
    f.recall_input = static_cast<double>(c.blocks) * 2 * d * d;
  return f;
}

Synthetic synthetic_setup(const SyntheticOptions& o) {
  Synthetic s;
  s.device = parse_device(o.device);
  s.dtype = parse_dtype(o.dtype);
  const Task& t = task(o.task);
  ModelConfig c = default_config(t.name(), parse_recall(o.recall), parse_norm(o.norm), o.width);
  c.heads = o.heads;
  validate(c);
  s.positions = 1;
  if (t.spec().grid.size() == 1) {  // 1-D: any length
    s.positions = o.positions;
  } else {
    for (int64_t g : t.spec().grid) s.positions *= g;
  }
  if (o.batch < 1) throw Error("--batch must be positive");
  if (s.positions < 1) throw Error("--positions must be positive");
  torch::manual_seed(0);
  s.model = LoopedTransformer(c);
  s.model->to(s.device, s.dtype);
  s.model->set_mixed_precision(is_mixed_precision(o.precision));
  const Split data = to_split("synthetic", t.synthetic(o.batch, s.positions, /*seed=*/0));
  s.input = data.inputs.to(s.device, s.dtype);
  s.target = data.targets.to(s.device);
  return s;
}

namespace {


// The dense layers of one iteration as products to time alone: every Linear of every block
// but Wh (which acts on x0 once per forward pass, not per iteration), each with an input of
// the iteration's shape.
struct Dense {
  torch::Tensor input, weight, bias;
};
std::vector<Dense> dense_layers(LoopedTransformerImpl& model, int64_t batch, int64_t positions,
                                const torch::TensorOptions& options, double& flops) {
  std::vector<Dense> dense;
  flops = 0;
  for (const auto& block : *model.recur_blocks) {
    const auto* wh = block->as<BlockImpl>()->Wh.get();
    for (const auto& m : block->modules(/*include_self=*/false)) {
      const auto* linear = m->as<torch::nn::LinearImpl>();
      if (!linear || linear == wh) continue;
      const torch::Tensor& w = linear->weight;
      dense.push_back({torch::randn({batch, positions, w.size(1)}, options), w, linear->bias});
      flops += 2.0 * batch * positions * w.size(0) * w.size(1);
    }
  }
  return dense;
}

}  // namespace

// ---- block --------------------------------------------------------------------------------

void run_block(const BlockOptions& o) {
  if (o.model.batch < 1 || o.reps < 1) throw Error("--batch and --reps must be positive");
  const torch::Device device = parse_device(o.model.device);
  const torch::Dtype dtype = parse_dtype(o.model.dtype);
  std::printf("LibTorch %s, %d thread(s), %s, %s\n", TORCH_VERSION, torch::get_num_threads(), device.str().c_str(),
              dtype_name(dtype).c_str());
  {
    const double s = matmul_seconds(device, dtype, o.reps);
    const double n = static_cast<double>(kMatmulSize);
    std::printf("matmul 2048^3          %8.1f GFLOP/s  (%.2f ms)\n", 2.0 * n * n * n / s / 1e9, s * 1e3);
  }
  Synthetic s = synthetic_setup(o.model);
  const ModelConfig& c = s.model->config();
  const double tokens = static_cast<double>(o.model.batch * s.positions);
  // One iteration from x0 itself, Wh x0 included (as before the Loop API, so the figures of
  // docs/performance.md compare): Loop::from_x0 inside the timed call. Its grid tables are a few
  // microseconds against the iteration's milliseconds.
  {
    torch::InferenceMode guard;
    const torch::Tensor x0 = Loop(*s.model, s.input).x0();
    const double sec = median_seconds(o.reps, [&] {
      Loop::from_x0(*s.model, x0).step(x0);
      sync_device(device);
    });
    std::printf("block, no gradient     %8.2f ms/iteration  (%.0f tokens/s; %s, %lld x %lld tokens, width %lld)\n",
                sec * 1e3, tokens / sec, c.task.c_str(), static_cast<long long>(o.model.batch),
                static_cast<long long>(s.positions), static_cast<long long>(c.width));
  }
  {
    torch::Tensor x0;
    {
      torch::NoGradGuard no_grad;
      x0 = Loop(*s.model, s.input).x0();
    }
    const double sec = median_seconds(o.reps, [&] {
      s.model->zero_grad();
      const torch::Tensor x = x0.clone().requires_grad_(true);
      Loop::from_x0(*s.model, x0).step(x).pow(2).mean().backward();
      sync_device(device);
    });
    std::printf("block, with backward   %8.2f ms/iteration  (%.0f tokens/s)\n", sec * 1e3, tokens / sec);
  }
}

// ---- step ---------------------------------------------------------------------------------

void run_step(const StepOptions& o) {
  if (o.n < 0 || o.k < 1 || o.reps < 1 || o.warmup < 0) throw Error("need n >= 0, k >= 1, reps >= 1");
  const torch::Device device = parse_device(o.model.device);
  const torch::Dtype dtype = parse_dtype(o.model.dtype);
  if (o.recompute) configure_allocator(AllocatorPolicy::kFootprint);  // as `train --recompute`
  // Under a launcher (RANK, WORLD_SIZE, ... or srun): a data-parallel step as `train` runs it,
  // each rank on its part of the batch, with the gradient all-reduce timed on its own.
  const auto ranks = Ranks::join(launch_from_environment(), device, std::chrono::seconds(60));
  const bool matmul = !o.no_matmul && ranks->size() == 1;  // ranks measuring at once would share the cores
  // The yardstick in the products' precision: bfloat16 under bf16-mixed.
  const torch::Dtype products = is_mixed_precision(o.model.precision) ? torch::kBFloat16 : dtype;
  const double gflops = matmul ? matmul_gflops(device, products, 5) : 0;
  Synthetic s = synthetic_setup(o.model);
  s.model->train();
  auto params = s.model->parameters();
  AdamWOptions adamw;
  adamw.fused = device.is_cuda();  // as `train`
  AdamW optimizer(s.model->named_parameters(), adamw);
  const auto [lo, hi] = ranks->part(0, o.model.batch);
  if (lo == hi) throw Error("bench step: batch " + std::to_string(o.model.batch) + " leaves a rank without examples");
  const torch::Tensor input = s.input.slice(0, lo, hi), target = s.target.slice(0, lo, hi);
  const double share = static_cast<double>(hi - lo) / static_cast<double>(o.model.batch);
  std::vector<double> allreduce;
  auto step = [&] {
    optimizer.zero_grad();
    progressive_backward(*s.model, input, target, o.n, o.k, 1.0, o.recompute);
    const auto before = std::chrono::steady_clock::now();
    std::vector<double> sums{0.0};
    ranks->sum_gradients(params, share, sums);
    allreduce.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count());
    torch::nn::utils::clip_grad_norm_(params, 1.0);
    optimizer.step(1e-4);
    sync_device(device);
  };
  const std::vector<double> t = sorted_seconds(o.warmup, o.reps, step);
  // The all-reduce of the timed steps (the warm-up steps ran first), median; on rank 0 it
  // includes waiting for the slower rank.
  std::vector<double> timed(allreduce.end() - o.reps, allreduce.end());
  std::sort(timed.begin(), timed.end());
  const double allreduce_seconds = ranks->size() > 1 ? timed[timed.size() / 2] : 0.0;
  nlohmann::json ops;
  if (o.count_ops) {
    // One iteration's operators in each phase: T = 2 iterations less T = 1 (the projection, Wh
    // x0, the head and the loss cancel). The loss is taken outside the counted backward.
    auto forward = [&](int64_t T) { return s.model->forward(input, T).logits; };
    auto loss_of = [&](const torch::Tensor& logits) {
      return torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}).to(torch::kFloat32),
                                                  target.reshape({-1}));
    };
    auto no_grad = [&](int64_t T) {
      return count_ops([&] {
        c10::InferenceMode inference;
        forward(T);
        sync_device(device);
      });
    };
    auto with_grad = [&](int64_t T) {
      return count_ops([&] {
        forward(T);
        sync_device(device);
      });
    };
    auto backward = [&](int64_t T) {
      optimizer.zero_grad();
      const torch::Tensor loss = loss_of(forward(T));
      return count_ops([&] {
        // (Not loss.backward(): in LibTorch that is itself an operator, aten::_backward, and
        // everything it runs would be inside it.)
        torch::autograd::backward({loss});
        sync_device(device);
      });
    };
    auto as_json = [](const OpCount& c) {
      return nlohmann::json{{"top", c.top}, {"all", c.all}, {"top_names", c.top_names}, {"top_seconds", c.top_seconds}};
    };
    {
      // Uncounted first: the weights' bfloat16 forms of bf16-mixed are made by the first
      // forward after the optimizer's step.
      c10::InferenceMode inference;
      forward(1);
    }
    const OpCount a = no_grad(2) - no_grad(1), b = with_grad(2) - with_grad(1), c = backward(2) - backward(1);
    const OpCount whole = count_ops(step);
    std::printf("ATen operators (top-level / all): per iteration %lld / %lld without gradient, %lld / %lld forward "
                "with gradient, %lld / %lld backward; per step %lld / %lld\n",
                static_cast<long long>(a.top), static_cast<long long>(a.all), static_cast<long long>(b.top),
                static_cast<long long>(b.all), static_cast<long long>(c.top), static_cast<long long>(c.all),
                static_cast<long long>(whole.top), static_cast<long long>(whole.all));
    ops = {{"iteration_no_grad", as_json(a)}, {"iteration_forward", as_json(b)}, {"iteration_backward", as_json(c)},
           {"step", as_json(whole)}};
  }
  if (!ranks->leader()) return;
  const double seconds = t[t.size() / 2];
  const FlopCount f = model_flops(s.model->config(), s.positions);
  const double tokens = static_cast<double>(o.model.batch * s.positions);
  const double n = static_cast<double>(o.n), k = static_cast<double>(o.k);
  // n forward iterations; k forward + backward (2x forward); head forward + backward; Wh x0
  // once for the n iterations and once (with backward) for the k: the products looplab runs,
  // not the paper code's Wh x0 in every iteration.
  const double flops =
      tokens * (n * f.iteration + 3 * k * f.iteration + 3 * f.head + (o.n > 0 ? f.recall_input : 0) + 3 * f.recall_input);
  const double model_gflops = flops / seconds / 1e9;
  std::printf("training step: %s, batch %lld x %lld tokens, width %lld, n = %lld, k = %lld%s: %.1f ms (median of %lld)\n",
              o.model.task.c_str(), static_cast<long long>(o.model.batch), static_cast<long long>(s.positions),
              static_cast<long long>(o.model.width), static_cast<long long>(o.n), static_cast<long long>(o.k),
              o.recompute ? ", recompute" : "", seconds * 1e3, static_cast<long long>(o.reps));
  if (ranks->size() > 1)
    std::printf("on %d ranks (%s) x %d thread(s): gradient all-reduce %.1f ms, %.1f%% of the step\n", ranks->size(),
                ranks->backend().c_str(), torch::get_num_threads(), allreduce_seconds * 1e3, 100 * allreduce_seconds / seconds);
  if (matmul)
    std::printf("model %.1f GFLOP/s against matmul %.1f GFLOP/s: %.0f%%\n", model_gflops, gflops,
                100 * model_gflops / gflops);
  std::printf("peak RSS %.0f MiB\n", peak_rss_mib());
  nlohmann::json j = {{"kind", "step"}, {"task", o.model.task}, {"batch", o.model.batch},
                            {"positions", s.positions}, {"n", o.n}, {"k", o.k},
                            {"recompute", o.recompute}, {"seconds", seconds}, {"times", t},
                            {"model_gflops", model_gflops}, {"matmul_gflops", gflops},
                            {"ranks", ranks->size()}, {"allreduce_seconds", allreduce_seconds},
                            {"threads", torch::get_num_threads()}, {"peak_rss_mib", peak_rss_mib()}};
  if (o.count_ops) j["ops"] = ops;
  std::printf("json: %s\n", j.dump().c_str());
}

// ---- latency ------------------------------------------------------------------------------

void run_latency(const LatencyOptions& o) {
  if (o.reps < 1) throw Error("--reps must be positive");
  Synthetic s = synthetic_setup(o.model);
  s.model->eval();
  torch::InferenceMode guard;
  // An iteration inside a loop, as looplab runs them: x0 and Wh x0 computed once (Loop).
  const Loop loop(*s.model, s.input);
  torch::Tensor x = loop.x0();
  for (int i = 0; i < 10; ++i) x = loop.step(x);
  const double seconds = median_seconds(o.reps, [&] {
    x = loop.step(x);
    sync_device(s.device);
  });
  std::printf("one iteration, batch %lld x %lld tokens (%s, width %lld): %.3f ms (median of %lld)\n",
              static_cast<long long>(o.model.batch), static_cast<long long>(s.positions), o.model.task.c_str(),
              static_cast<long long>(o.model.width), seconds * 1e3, static_cast<long long>(o.reps));
  // The floor of any implementation that runs this iteration's dense layers through this
  // BLAS: those products alone, same shapes and weights, same process. Nothing else of the
  // iteration (attention scores, norms, RoPE, GELU, residuals) is in it.
  double dense_flops = 0;
  // In the weights' dtype (under bf16-mixed the state can be bfloat16; these run without autocast).
  const std::vector<Dense> dense =
      dense_layers(*s.model, o.model.batch, s.positions, x.options().dtype(s.model->dtype()), dense_flops);
  const double dense_seconds = median_seconds(o.reps, [&] {
    for (const Dense& l : dense) at::linear(l.input, l.weight, l.bias);
    sync_device(s.device);
  });
  const double gflops = matmul_gflops(s.device, s.model->mixed_precision() ? torch::kBFloat16 : s.dtype, 5);
  // The iteration's model FLOPs (model_flops: what looplab runs, Wh x0 outside the loop).
  const double iteration_flops =
      model_flops(s.model->config(), s.positions).iteration * static_cast<double>(o.model.batch * s.positions);
  std::printf("model %.1f GFLOP/s against matmul %.1f GFLOP/s: %.0f%%\n", iteration_flops / seconds / 1e9, gflops,
              100 * iteration_flops / seconds / 1e9 / gflops);
  std::printf("its %zu dense-layer products alone: %.3f ms (%.1f GFLOP/s; matmul 2048^3 %.1f GFLOP/s)\n",
              dense.size(), dense_seconds * 1e3, dense_flops / dense_seconds / 1e9, gflops);
  const nlohmann::json j = {{"kind", "latency"}, {"task", o.model.task}, {"batch", o.model.batch},
                            {"positions", s.positions}, {"seconds", seconds},
                            {"dense_seconds", dense_seconds}, {"dense_flops", dense_flops},
                            {"iteration_flops", iteration_flops}, {"width", o.model.width},
                            {"matmul_gflops", gflops}, {"threads", torch::get_num_threads()}};
  std::printf("json: %s\n", j.dump().c_str());
}

// ---- eval ---------------------------------------------------------------------------------

void run_eval(const EvalOptions& o) {
  if (o.count < 1 || o.batch < 1 || o.iters < 1) throw Error("--count, --batch, --iters must be positive");
  std::vector<FixedPointOptions> runs;
  for (const std::string& mode : o.modes) {
    FixedPointOptions fp;
    fp.max_iters = o.iters;
    if (mode == "early") {
      fp.tolerance = o.tolerance;
    } else if (mode == "anderson") {
      fp.tolerance = o.tolerance;
      fp.anderson = o.anderson;
    } else if (mode != "plain") {
      throw Error("--modes: unknown mode '" + mode + "' (plain, early, anderson)");
    }
    runs.push_back(fp);
  }
  const RunFolder run(o.dir);
  const torch::Device device = parse_device(o.device);
  LoopedTransformer model = load_model(o.dir, device, parse_dtype(o.dtype), run.weights(o.weights));
  model->eval();
  DataOptions data = run.evaluation_data();
  data.set_count(o.split, o.count);
  const Split split = load_split(data, o.split);
  std::printf("%s split, %lld examples x %lld positions, up to %lld iterations, batch %lld\n", o.split.c_str(),
              static_cast<long long>(split.size()), static_cast<long long>(split.inputs.size(1)),
              static_cast<long long>(o.iters), static_cast<long long>(o.batch));
  std::printf("%-22s %14s %10s %10s %9s %9s\n", "mode", "block evals", "per ex.", "converged", "exact %", "seconds");
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string& mode = o.modes[i];
    const FixedPointOptions& fp = runs[i];
    const AcceleratedSplitReport e = evaluate_accelerated(*model, split, o.batch, fp);
    std::printf("%-22s %14lld %10.1f %9.1f%% %9.2f %9.2f\n", mode.c_str(), static_cast<long long>(e.block_evaluations),
                e.mean_evaluations, 100 * e.converged, 100 * e.exact, e.seconds);
    const nlohmann::json j = {{"kind", "eval"}, {"mode", mode}, {"split", o.split},
                              {"count", e.count}, {"positions", split.inputs.size(1)},
                              {"iters", o.iters}, {"tol", fp.tolerance}, {"anderson", fp.anderson},
                              {"evaluations", e.block_evaluations}, {"mean_evaluations", e.mean_evaluations},
                              {"max_evaluations", e.max_evaluations}, {"converged", e.converged},
                              {"rejected", e.rejected}, {"exact", e.exact},
                              {"per_position", e.per_position}, {"seconds", e.seconds},
                              {"threads", torch::get_num_threads()}};
    std::printf("json: %s\n", j.dump().c_str());
    std::fflush(stdout);
  }
}

}  // namespace looplab::bench
