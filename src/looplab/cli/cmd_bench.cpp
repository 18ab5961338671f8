// looplab bench block: the machine's matrix-product speed and the cost of one iteration of
// an external-recall block at paper width, measured in one process so the figures compare.
#include <chrono>
#include <cstdio>
#include <iostream>

#include "looplab/cli/commands.h"
#include "looplab/cli/group.h"
#include "looplab/model/looped_transformer.h"
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

}  // namespace

Command add_bench(CLI::App& parent) {
  auto* app = parent.add_subcommand("bench", "Benchmarks (not tests)");
  return command_group(app, {add_bench_block(app), add_bench_sudoku(app)});
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

}  // namespace looplab::cli
