// looplab bench block: the machine's matrix-product speed and the cost of one iteration of
// an external-recall block at paper width, measured in one process so the figures compare.
// looplab bench step / latency / eval: the looplab side of bench/run (issue 8): a training
// step with fixed n and k (time, model FLOP/s against the same process's matmul, peak RSS),
// batch-1 latency of one iteration, and plain / early-exit / Anderson evaluation of a model.
// Each ends with one line `json: {...}` that bench/run reads.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "looplab/cli/commands.h"
#include "looplab/cli/group.h"
#include "looplab/eval/accelerated.h"
#include "looplab/model/looped_transformer.h"
#include "looplab/model/model_dir.h"
#include "looplab/train/adamw.h"
#include "looplab/train/progressive_loss.h"
#include "looplab/train/trainer.h"
#include "looplab/tasks/sudoku/dataset.h"
#include "looplab/tasks/sudoku/solver.h"
#include "looplab/runtime.h"
#include "looplab/util/error.h"

namespace looplab::cli {

namespace {

// Median seconds of `reps` runs of fn after one warm-up run.
template <typename F>
double median_seconds(int reps, F&& fn) {
  fn();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

namespace {

// Sudoku generation and solving rates; no model involved.
Command add_bench_sudoku(CLI::App* bench) {
  auto* app = bench->add_subcommand("sudoku", "Puzzle generation rate (all threads and one) and solving rate per band");
  struct Options {
    int64_t count = 2000;
    uint64_t seed = 1;
  };
  auto o = std::make_shared<Options>();
  app->add_option("--count", o->count, "puzzles to generate with all threads")->capture_default_str();
  app->add_option("--seed", o->seed, "random seed")->capture_default_str();
  return {app, [o] {
            if (o->count < 10) throw Error("--count must be >= 10");
            using clock = std::chrono::steady_clock;
            auto seconds_since = [](clock::time_point t) {
              return std::chrono::duration<double>(clock::now() - t).count();
            };
            sudoku::GeneratorOptions all;
            all.threads = torch::get_num_threads();
            auto start = clock::now();
            const auto puzzles = sudoku::generate(o->count, o->seed, all);
            const double t_all = seconds_since(start);
            sudoku::GeneratorOptions one;
            one.threads = 1;
            const int64_t few = std::max<int64_t>(o->count / 4, 10);
            start = clock::now();
            const auto check = sudoku::generate(few, o->seed, one);
            const double t_one = seconds_since(start);
            for (int64_t i = 0; i < few; ++i)
              if (check[i].question != puzzles[i].question) throw Error("generation differs between thread counts");
            std::printf("generation: %.1f puzzles/s on %d threads, %.1f on 1 thread (x%.2f); 60,000 puzzles take %.1f min\n",
                        o->count / t_all, all.threads, few / t_one, (o->count / t_all) / (few / t_one),
                        60000 / (o->count / t_all) / 60);
            const sudoku::RatingSplit bands = sudoku::split_by_rating(puzzles);
            for (const auto& [name, band] : {std::pair{"easy", bands.easy}, std::pair{"hard", bands.hard}}) {
              int64_t solved = 0, backtracks = 0;
              start = clock::now();
              do {
                for (int64_t i : band) {
                  const auto r = sudoku::solve(puzzles[i].question, 2);
                  solved += r.solutions == 1;
                  backtracks += r.backtracks;
                }
              } while (seconds_since(start) < 0.5);
              std::printf("solving %s band (%zu puzzles): %.0f puzzles/s on 1 thread, mean %.1f backtracks\n", name,
                          band.size(), solved / seconds_since(start), static_cast<double>(backtracks) / solved);
            }
            std::cout << sudoku::rating_report(puzzles);
          }};
}

Command add_bench_block(CLI::App* app_parent);
Command add_bench_step(CLI::App* app_parent);
Command add_bench_latency(CLI::App* app_parent);
Command add_bench_eval(CLI::App* app_parent);

}  // namespace

Command add_bench(CLI::App& parent) {
  auto* app = parent.add_subcommand("bench", "Benchmarks (not tests)");
  return command_group(app, {add_bench_block(app), add_bench_sudoku(app), add_bench_step(app),
                             add_bench_latency(app), add_bench_eval(app)});
}

namespace {

Command add_bench_block(CLI::App* app_parent) {
  auto* block = app_parent->add_subcommand("block", "2048^3 matmul GFLOP/s and one block iteration (default: external recall, paper width, 100 x 81 tokens)");
  auto* app = block;
  struct Options {
    int64_t batch = 100, width = 256, heads = 8, positions = 32, reps = 5;
    std::string device = "cpu", dtype = "float32", task = "sudoku", recall = "external", norm = "post";
  };
  auto o = std::make_shared<Options>();
  block->add_option("--batch", o->batch, "examples per batch")->capture_default_str();
  block->add_option("--task", o->task, "sudoku (81 tokens, full attention), chess or prefix-sums")->capture_default_str();
  block->add_option("--positions", o->positions, "prefix sums: tokens per example")->capture_default_str();
  block->add_option("--recall", o->recall, "recall of the block")->capture_default_str();
  block->add_option("--norm", o->norm, "normalization of the block")->capture_default_str();
  block->add_option("--width", o->width, "model width")->capture_default_str();
  block->add_option("--heads", o->heads, "attention heads")->capture_default_str();
  block->add_option("--reps", o->reps, "timed repetitions (median reported)")->capture_default_str();
  block->add_option("--device", o->device, "cpu, cuda or cuda:N")->capture_default_str();
  block->add_option("--dtype", o->dtype, "float32, float64, bfloat16 or float16")->capture_default_str();
  return {app, [o] {
            if (o->batch < 1 || o->reps < 1) throw Error("--batch and --reps must be positive");
            const torch::Device device = parse_device(o->device);
            const torch::Dtype dtype = parse_dtype(o->dtype);
            auto sync = [&] {
              if (device.is_cuda()) torch::cuda::synchronize();
            };
            const auto opts = torch::TensorOptions().device(device).dtype(dtype);
            std::printf("LibTorch %s, %d thread(s), %s, %s\n", TORCH_VERSION, torch::get_num_threads(),
                        device.str().c_str(), dtype_name(dtype).c_str());

            torch::manual_seed(0);
            {
              torch::InferenceMode guard;
              const int64_t n = 2048;
              const torch::Tensor a = torch::randn({n, n}, opts), b = torch::randn({n, n}, opts);
              const double s = median_seconds(static_cast<int>(o->reps), [&] {
                torch::mm(a, b);
                sync();
              });
              std::printf("matmul 2048^3          %8.1f GFLOP/s  (%.2f ms)\n", 2.0 * n * n * n / s / 1e9, s * 1e3);
            }

            ModelConfig c = default_config(o->task, parse_recall(o->recall), parse_norm(o->norm), o->width);
            c.heads = o->heads;
            validate(c);
            LoopedTransformer model(c);
            model->to(device, dtype);
            const int64_t L = c.grid.size() == 1 ? o->positions : c.grid[0] * c.grid[1];
            const torch::Tensor input = torch::randn({o->batch, L, c.in_channels}, opts);
            const Positions p = model->positions(model->grid_for(L));
            const double tokens = static_cast<double>(o->batch) * L;
            {
              torch::InferenceMode guard;
              const torch::Tensor x0 = model->embed(input);
              const double s = median_seconds(static_cast<int>(o->reps), [&] {
                model->iterate(x0, x0, p);
                sync();
              });
              std::printf("block, no gradient     %8.2f ms/iteration  (%.0f tokens/s; %s, %lld x %lld tokens, width %lld)\n",
                          s * 1e3, tokens / s, c.task.c_str(), static_cast<long long>(o->batch),
                          static_cast<long long>(L), static_cast<long long>(c.width));
            }
            {
              const torch::Tensor x0 = model->embed(input).detach();
              const double s = median_seconds(static_cast<int>(o->reps), [&] {
                model->zero_grad();
                const torch::Tensor x = x0.clone().requires_grad_(true);
                model->iterate(x, x0, p).pow(2).mean().backward();
                sync();
              });
              std::printf("block, with backward   %8.2f ms/iteration  (%.0f tokens/s)\n", s * 1e3, tokens / s);
            }
          }};
}

}  // namespace

namespace {

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;  // KiB on Linux
}

void sync_device(torch::Device device) {
  if (device.is_cuda()) torch::cuda::synchronize();
}

// GFLOP/s of a 2048^3 matrix product (median of `reps`).
double matmul_gflops(torch::Device device, torch::Dtype dtype, int reps) {
  torch::InferenceMode guard;
  const int64_t n = 2048;
  const auto opts = torch::TensorOptions().device(device).dtype(dtype);
  const torch::Tensor a = torch::randn({n, n}, opts), b = torch::randn({n, n}, opts);
  const double s = median_seconds(reps, [&] {
    torch::mm(a, b);
    sync_device(device);
  });
  return 2.0 * n * n * n / s / 1e9;
}

// Matrix-product FLOPs of one iteration and of the head, per token (multiply-add = 2): the
// model as SPEC section 1 defines it (neighbourhood attention: `window` keys per query, the
// useful ones, even where it is computed as a masked dense product).
struct FlopCount {
  double iteration = 0, head = 0;
  double recall_input = 0;  // Wh x0: once per forward pass, not per iteration (recall_input)
};
FlopCount model_flops(const ModelConfig& c, int64_t positions) {
  const double d = static_cast<double>(c.width);
  double keys = static_cast<double>(positions);
  if (c.local_attention) {
    keys = 1;
    for (size_t a = 0; a < c.grid.size(); ++a)
      keys *= std::min<int64_t>(c.window, c.grid.size() == 1 ? positions : c.grid[a]);
  }
  const double attention = 2 * (3 * d * d + d * d) + 2 * 2 * keys * d;
  const double mlp = 2 * 2 * c.mlp_ratio * d * d;
  double recall = 0;  // Wx x per use of g
  if (c.recall == Recall::kExternal) recall = 2 * d * d;
  if (c.recall == Recall::kInternal) recall = 2 * 2 * d * d;  // one g per sublayer
  const double gru = c.norm == Norm::kGru ? 2 * 2 * 2 * 3 * d * d : 0;
  FlopCount f;
  f.iteration = static_cast<double>(c.blocks) * (attention + mlp + recall + gru);
  f.head = 2 * (d * d + d * c.out_channels) + 2 * c.in_channels * d;
  if (c.recall == Recall::kExternal || c.recall == Recall::kInternal)
    f.recall_input = static_cast<double>(c.blocks) * 2 * d * d;
  return f;
}

struct BenchModel {
  std::string task = "prefix-sums", device = "cpu", dtype = "float32";
  int64_t width = 256, heads = 8, positions = 32, batch = 500;
};
void add_bench_model_options(CLI::App* app, BenchModel& o) {
  app->add_option("--task", o.task, "prefix-sums (any length, window 5) or sudoku (81 tokens, full attention)")
      ->capture_default_str();
  app->add_option("--positions", o.positions, "prefix sums: tokens per example")->capture_default_str();
  app->add_option("--batch", o.batch, "examples per batch")->capture_default_str();
  app->add_option("--width", o.width, "model width")->capture_default_str();
  app->add_option("--heads", o.heads, "attention heads")->capture_default_str();
  app->add_option("--device", o.device, "cpu, cuda or cuda:N")->capture_default_str();
  app->add_option("--dtype", o.dtype, "float32, float64, bfloat16 or float16")->capture_default_str();
}

// An external-recall post-norm model (the benchmarked variant) and a batch of inputs/targets.
struct BenchSetup {
  LoopedTransformer model{nullptr};
  torch::Tensor input, target;
  int64_t positions = 0;
};
BenchSetup bench_setup(const BenchModel& o, torch::Device device, torch::Dtype dtype) {
  ModelConfig c = default_config(o.task, Recall::kExternal, Norm::kPost, o.width);
  c.heads = o.heads;
  validate(c);
  torch::manual_seed(0);
  BenchSetup s;
  s.model = LoopedTransformer(c);
  s.model->to(device, dtype);
  s.positions = c.grid.size() == 1 ? o.positions : c.grid[0] * c.grid[1];
  const auto opts = torch::TensorOptions().device(device);
  if (c.task == "prefix-sums") {
    s.input = torch::randint(0, 2, {o.batch, s.positions, 1}, opts.dtype(torch::kInt64));
    s.target = s.input.squeeze(2).cumsum(1) % 2;
    s.input = s.input.to(dtype);
  } else {
    const torch::Tensor cls = torch::randint(0, c.in_channels, {o.batch, s.positions}, opts.dtype(torch::kInt64));
    s.input = torch::one_hot(cls, c.in_channels).to(dtype);
    s.target = torch::randint(0, c.out_channels, {o.batch, s.positions}, opts.dtype(torch::kInt64));
  }
  return s;
}

Command add_bench_step(CLI::App* parent) {
  auto* app = parent->add_subcommand(
      "step", "One training step with fixed n and k (external recall, post norm): time, model FLOP/s, matmul "
              "GFLOP/s of the same process, peak RSS");
  struct Options {
    BenchModel model;
    int64_t n = 2, k = 2, reps = 3, warmup = 1;
    bool recompute = false, no_matmul = false;
  };
  auto o = std::make_shared<Options>();
  add_bench_model_options(app, o->model);
  app->add_option("--n", o->n, "iterations without gradient")->capture_default_str();
  app->add_option("--k", o->k, "iterations with gradient")->capture_default_str();
  app->add_option("--reps", o->reps, "timed steps (median reported)")->capture_default_str();
  app->add_option("--warmup", o->warmup, "untimed steps first")->capture_default_str();
  app->add_flag("--recompute", o->recompute, "recompute each gradient iteration's activations in the backward pass");
  app->add_flag("--no-matmul", o->no_matmul, "skip the matmul measurement (peak RSS runs)");
  return {app, [o] {
            if (o->n < 0 || o->k < 1 || o->reps < 1 || o->warmup < 0) throw Error("need n >= 0, k >= 1, reps >= 1");
            const torch::Device device = parse_device(o->model.device);
            const torch::Dtype dtype = parse_dtype(o->model.dtype);
            if (o->recompute) configure_allocator(AllocatorPolicy::kFootprint);  // as `train --recompute`
            const double gflops = o->no_matmul ? 0 : matmul_gflops(device, dtype, 5);
            BenchSetup s = bench_setup(o->model, device, dtype);
            s.model->train();
            auto params = s.model->parameters();
            AdamW optimizer(s.model->named_parameters(), AdamWOptions{});
            auto step = [&] {
              optimizer.zero_grad();
              progressive_backward(*s.model, s.input, s.target, o->n, o->k, 1.0, o->recompute);
              torch::nn::utils::clip_grad_norm_(params, 1.0);
              optimizer.step(1e-4);
              sync_device(device);
            };
            for (int64_t i = 0; i < o->warmup; ++i) step();
            std::vector<double> t;
            for (int64_t i = 0; i < o->reps; ++i) {
              const auto start = std::chrono::steady_clock::now();
              step();
              t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
            }
            std::sort(t.begin(), t.end());
            const double seconds = t[t.size() / 2];
            const FlopCount f = model_flops(s.model->config(), s.positions);
            const double tokens = static_cast<double>(o->model.batch) * s.positions;
            // n forward iterations; k forward + backward (2x forward); head forward + backward;
            // Wh x0 once for the n iterations and once (with backward) for the k: the products
            // looplab runs, not the paper code's Wh x0 in every iteration.
            const double flops = tokens * (o->n * f.iteration + 3 * o->k * f.iteration + 3 * f.head +
                                           (o->n > 0 ? f.recall_input : 0) + 3 * f.recall_input);
            const double model_gflops = flops / seconds / 1e9;
            std::printf("training step: %s, batch %lld x %lld tokens, width %lld, n = %lld, k = %lld%s: %.1f ms (median of %lld)\n",
                        o->model.task.c_str(), static_cast<long long>(o->model.batch),
                        static_cast<long long>(s.positions), static_cast<long long>(o->model.width),
                        static_cast<long long>(o->n), static_cast<long long>(o->k), o->recompute ? ", recompute" : "",
                        seconds * 1e3, static_cast<long long>(o->reps));
            if (!o->no_matmul)
              std::printf("model %.1f GFLOP/s against matmul %.1f GFLOP/s: %.0f%%\n", model_gflops, gflops,
                          100 * model_gflops / gflops);
            std::printf("peak RSS %.0f MiB\n", peak_rss_mib());
            const nlohmann::json j = {{"kind", "step"}, {"task", o->model.task}, {"batch", o->model.batch},
                                      {"positions", s.positions}, {"n", o->n}, {"k", o->k},
                                      {"recompute", o->recompute}, {"seconds", seconds}, {"times", t},
                                      {"model_gflops", model_gflops}, {"matmul_gflops", gflops},
                                      {"threads", torch::get_num_threads()}, {"peak_rss_mib", peak_rss_mib()}};
            std::printf("json: %s\n", j.dump().c_str());
          }};
}

Command add_bench_latency(CLI::App* parent) {
  auto* app = parent->add_subcommand("latency", "Latency of one iteration at batch 1 (inference mode)");
  struct Options {
    BenchModel model;
    int64_t reps = 200;
  };
  auto o = std::make_shared<Options>();
  o->model.batch = 1;
  add_bench_model_options(app, o->model);
  app->add_option("--reps", o->reps, "timed iterations (median reported)")->capture_default_str();
  return {app, [o] {
            if (o->reps < 1) throw Error("--reps must be positive");
            const torch::Device device = parse_device(o->model.device);
            BenchSetup s = bench_setup(o->model, device, parse_dtype(o->model.dtype));
            s.model->eval();
            torch::InferenceMode guard;
            const Positions p = s.model->positions(s.model->grid_for(s.positions));
            // An iteration inside a loop, as looplab runs them: Wh x0 is computed once per
            // forward pass, not per iteration.
            const torch::Tensor x0 = s.model->embed(s.input);
            const auto r = s.model->recall_input(x0);
            torch::Tensor x = x0;
            for (int i = 0; i < 10; ++i) x = s.model->iterate(x, r, p);
            const double seconds = median_seconds(static_cast<int>(o->reps), [&] {
              x = s.model->iterate(x, r, p);
              sync_device(device);
            });
            std::printf("one iteration, batch %lld x %lld tokens (%s, width %lld): %.3f ms (median of %lld)\n",
                        static_cast<long long>(o->model.batch), static_cast<long long>(s.positions),
                        o->model.task.c_str(), static_cast<long long>(o->model.width), seconds * 1e3,
                        static_cast<long long>(o->reps));
            // The floor of any implementation that runs this iteration's dense layers through
            // this BLAS: those products alone, same shapes and weights, same process. Nothing
            // else of the iteration (attention scores, norms, RoPE, GELU, residuals) is in it.
            // Every Linear of a block but Wh, which acts on x0 once per forward pass.
            struct Dense {
              torch::Tensor input, weight, bias;
            };
            std::vector<Dense> dense;
            double dense_flops = 0;
            for (const auto& block : *s.model->recur_blocks) {
              const auto* wh = block->as<BlockImpl>()->Wh.get();
              for (const auto& m : block->modules(/*include_self=*/false)) {
                const auto* linear = m->as<torch::nn::LinearImpl>();
                if (!linear || linear == wh) continue;
                const torch::Tensor& w = linear->weight;
                dense.push_back({torch::randn({o->model.batch, s.positions, w.size(1)}, x.options()), w, linear->bias});
                dense_flops += 2.0 * o->model.batch * s.positions * w.size(0) * w.size(1);
              }
            }
            const double dense_seconds = median_seconds(static_cast<int>(o->reps), [&] {
              for (const Dense& l : dense) at::linear(l.input, l.weight, l.bias);
              sync_device(device);
            });
            const double gflops = matmul_gflops(device, parse_dtype(o->model.dtype), 5);
            std::printf("its %zu dense-layer products alone: %.3f ms (%.1f GFLOP/s; matmul 2048^3 %.1f GFLOP/s)\n",
                        dense.size(), dense_seconds * 1e3, dense_flops / dense_seconds / 1e9, gflops);
            const nlohmann::json j = {{"kind", "latency"}, {"task", o->model.task}, {"batch", o->model.batch},
                                      {"positions", s.positions}, {"seconds", seconds},
                                      {"dense_seconds", dense_seconds}, {"dense_flops", dense_flops},
                                      {"matmul_gflops", gflops}, {"threads", torch::get_num_threads()}};
            std::printf("json: %s\n", j.dump().c_str());
          }};
}

Command add_bench_eval(CLI::App* parent) {
  auto* app = parent->add_subcommand(
      "eval", "A model directory evaluated by plain iteration, early exit and Anderson: block evaluations, time, "
              "exact accuracy");
  struct Options {
    std::string dir, split = "hard", weights = "best", device = "cpu", dtype = "float32", modes = "plain,early,anderson";
    int64_t count = 200, batch = 100, iters = 500, anderson = 5;
    double tol = 1e-3;
  };
  auto o = std::make_shared<Options>();
  app->add_option("dir", o->dir, "model or run directory")->required();
  app->add_option("--split", o->split, "train, val or hard")->capture_default_str();
  app->add_option("--count", o->count, "first N examples of the split")->capture_default_str();
  app->add_option("--batch", o->batch, "examples per batch")->capture_default_str();
  app->add_option("--iters", o->iters, "iterations (block evaluations) per example, at most")->capture_default_str();
  app->add_option("--tol", o->tol, "early-exit tolerance on ||x_{t+1}-x_t||/||x_t|| (early and anderson)")
      ->capture_default_str();
  app->add_option("--anderson", o->anderson, "Anderson memory")->capture_default_str();
  app->add_option("--modes", o->modes, "comma-separated: plain, early, anderson")->capture_default_str();
  app->add_option("--weights", o->weights, "best or latest")->capture_default_str();
  app->add_option("--device", o->device, "cpu, cuda or cuda:N")->capture_default_str();
  app->add_option("--dtype", o->dtype, "float32 or float64")->capture_default_str();
  return {app, [o] {
            if (o->count < 1 || o->batch < 1 || o->iters < 1) throw Error("--count, --batch, --iters must be positive");
            const torch::Device device = parse_device(o->device);
            LoopedTransformer model = load_model(o->dir, device, parse_dtype(o->dtype), weights_file(o->dir, o->weights));
            model->eval();
            DataSettings data = evaluation_data(o->dir, model->config().task);
            if (o->split == "train") data.train_count = o->count;
            if (o->split == "val") data.val_count = o->count;
            if (o->split == "hard") data.hard_count = o->count;
            const Split split = load_split(data, o->split);
            std::printf("%s split, %lld examples x %lld positions, up to %lld iterations, batch %lld\n",
                        o->split.c_str(), static_cast<long long>(split.size()),
                        static_cast<long long>(split.inputs.size(1)), static_cast<long long>(o->iters),
                        static_cast<long long>(o->batch));
            std::printf("%-22s %14s %10s %10s %9s %9s\n", "mode", "block evals", "per ex.", "converged", "exact %", "seconds");
            std::stringstream modes(o->modes);
            std::string mode;
            while (std::getline(modes, mode, ',')) {
              FixedPointOptions fp;
              fp.max_evals = o->iters;
              std::string label = mode;
              if (mode == "early") {
                fp.tol = o->tol;
              } else if (mode == "anderson") {
                fp.tol = o->tol;
                fp.anderson = o->anderson;
              } else if (mode != "plain") {
                throw Error("--modes: unknown mode '" + mode + "' (plain, early, anderson)");
              }
              const AcceleratedEval e = evaluate_accelerated(*model, split, o->batch, fp);
              std::printf("%-22s %14lld %10.1f %9.1f%% %9.2f %9.2f\n", label.c_str(),
                          static_cast<long long>(e.evaluations), e.mean_evaluations, 100 * e.converged, 100 * e.exact,
                          e.seconds);
              const nlohmann::json j = {{"kind", "eval"}, {"mode", mode}, {"split", o->split},
                                        {"count", e.count}, {"positions", split.inputs.size(1)},
                                        {"iters", o->iters}, {"tol", fp.tol}, {"anderson", fp.anderson},
                                        {"evaluations", e.evaluations}, {"mean_evaluations", e.mean_evaluations},
                                        {"max_evaluations", e.max_evaluations}, {"converged", e.converged},
                                        {"rejected", e.rejected}, {"exact", e.exact},
                                        {"per_position", e.per_position}, {"seconds", e.seconds},
                                        {"threads", torch::get_num_threads()}};
              std::printf("json: %s\n", j.dump().c_str());
              std::fflush(stdout);
            }
          }};
}

}  // namespace

}  // namespace looplab::cli
