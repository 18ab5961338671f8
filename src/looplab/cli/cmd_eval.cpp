// looplab eval: accuracy against iterations per split, the relative step and how many
// predictions have stopped changing; written to DIR/eval.json with a compact table.
// With --early-exit or --anderson: the cheaper evaluation of eval/accelerated.h instead (block
// evaluations, time, accuracy at each example's convergence), written to
// DIR/eval_accelerated.json.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "looplab/cli/commands.h"
#include "looplab/cli/split_list.h"
#include "looplab/eval/accelerated.h"
#include "looplab/eval/evaluate.h"
#include "looplab/io/atomic_file.h"
#include "looplab/model/model_dir.h"
#include "looplab/runtime.h"
#include "looplab/train/trainer.h"
#include "looplab/util/error.h"

namespace looplab::cli {

namespace {

// "a:b" or "b" (meaning 1:b).
std::pair<int64_t, int64_t> parse_range(const std::string& s) {
  try {
    const size_t colon = s.find(':');
    size_t used = 0;
    int64_t lo = 1, hi;
    if (colon == std::string::npos) {
      hi = std::stoll(s, &used);
      if (used != s.size()) throw std::invalid_argument(s);
    } else {
      lo = std::stoll(s.substr(0, colon), &used);
      if (used != colon) throw std::invalid_argument(s);
      hi = std::stoll(s.substr(colon + 1), &used);
      if (used != s.size() - colon - 1) throw std::invalid_argument(s);
    }
    if (lo < 1 || hi < lo) throw std::invalid_argument(s);
    return {lo, hi};
  } catch (const std::logic_error&) {
    throw Error("--iters '" + s + "': expected FIRST:LAST with 1 <= FIRST <= LAST, e.g. 1:500");
  }
}


// --early-exit / --anderson: one row per split, DIR/eval_accelerated.json.
template <typename Options>
void run_accelerated(LoopedTransformerImpl& model, DataSettings data, const std::vector<std::string>& splits,
                     const Options& o, int64_t max_iters, const std::string& weights, bool interactive) {
  FixedPointOptions fp;
  fp.max_evals = max_iters;
  fp.tol = o.early_exit;
  fp.anderson = o.anderson;
  nlohmann::json out = {{"weights", weights},
                        {"max_iters", max_iters},
                        {"early_exit", o.early_exit},
                        {"anderson", o.anderson},
                        {"splits", nlohmann::json::object()}};
  if (!o.json)
    std::printf("%-6s %8s %10s %14s %12s %9s %12s %11s %9s\n", "split", "examples", "positions", "block evals",
                "evals/ex.", "max", "converged %", "exact %", "seconds");
  for (const std::string& name : splits) {
    if (name == "train") data.train_count = o.count ? o.count : data.train_count;
    if (name == "val") data.val_count = o.count ? o.count : data.val_count;
    if (name == "hard") data.hard_count = o.count ? o.count : data.hard_count;
    const Split split = load_split(data, name);
    const AcceleratedEval e = evaluate_accelerated(model, split, o.batch, fp, [&](int64_t done, int64_t total) {
      if (interactive)
        std::fprintf(stderr, "\r%s: %lld/%lld examples", name.c_str(), static_cast<long long>(done),
                     static_cast<long long>(total));
    });
    if (interactive) std::fprintf(stderr, "\r%60s\r", "");
    out["splits"][name] = {{"count", e.count},
                           {"positions", split.inputs.size(1)},
                           {"block_evaluations", e.evaluations},
                           {"plain_block_evaluations", e.count * max_iters},
                           {"mean_evaluations", e.mean_evaluations},
                           {"max_evaluations", e.max_evaluations},
                           {"converged", e.converged},
                           {"rejected", e.rejected},
                           {"exact", e.exact},
                           {"per_position", e.per_position},
                           {"seconds", e.seconds}};
    if (!o.json)
      std::printf("%-6s %8lld %10lld %14lld %12.1f %9lld %12.2f %11.2f %9.2f\n", name.c_str(),
                  static_cast<long long>(e.count), static_cast<long long>(split.inputs.size(1)),
                  static_cast<long long>(e.evaluations), e.mean_evaluations, static_cast<long long>(e.max_evaluations),
                  100 * e.converged, 100 * e.exact, e.seconds);
  }
  write_file_atomic(o.dir + "/eval_accelerated.json", out.dump() + "\n");
  if (o.json)
    std::cout << out.dump(2) << "\n";
  else
    std::printf("(plain iteration: %lld block evaluations per example) wrote %s/eval_accelerated.json\n",
                static_cast<long long>(max_iters), o.dir.c_str());
}

}  // namespace

Command add_eval(CLI::App& parent) {
  auto* app = parent.add_subcommand("eval", "Accuracy against iterations on val and hard data");
  struct Options {
    std::string dir, splits = "val,hard", iters = "1:500", weights = "best", device = "cpu", dtype = "float32";
    int64_t batch = 500, count = 0, anderson = 0;
    double early_exit = 0;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  app->add_option("dir", o->dir, "run or model directory")->required();
  app->add_option("--split", o->splits, "comma-separated splits: train, val, hard")->capture_default_str();
  app->add_option("--iters", o->iters, "iteration range FIRST:LAST")->capture_default_str();
  app->add_option("--weights", o->weights, "best or latest")->capture_default_str();
  app->add_option("--count", o->count, "use only the first N examples of each split (0: all)");
  app->add_option("--batch", o->batch, "examples per batch")->capture_default_str();
  app->add_option("--device", o->device, "cpu, cuda or cuda:N")->capture_default_str();
  app->add_option("--dtype", o->dtype, "float32 or float64")->capture_default_str();
  app->add_flag("--json", o->json, "print eval.json to stdout instead of the table");
  app->add_option("--early-exit", o->early_exit,
                  "per-example early exit: stop an example once ||x_{t+1}-x_t||/||x_t|| < TOL; its answer is "
                  "the one at its convergence (0: off)");
  app->add_option("--anderson", o->anderson,
                  "Anderson acceleration of the fixed-point iteration with memory M (type II, safeguarded; 0: off)");
  return {app, [o] {
            const auto [first, last] = parse_range(o->iters);
            if (o->batch < 1 || o->count < 0) throw Error("--batch must be >= 1 and --count >= 0");
            const std::string weights = weights_file(o->dir, o->weights);
            const torch::Device device = parse_device(o->device);
            LoopedTransformer model = load_model(o->dir, device, parse_dtype(o->dtype), weights);
            model->eval();
            DataSettings data = evaluation_data(o->dir, model->config().task);
            const bool interactive = isatty(fileno(stderr));
            if (o->early_exit < 0 || o->anderson < 0) throw Error("--early-exit and --anderson must be >= 0");
            if (o->early_exit > 0 || o->anderson > 0) {
              run_accelerated(*model, data, split_list(o->splits), *o, last, weights, interactive);
              return;
            }

            nlohmann::json out = {{"weights", weights}, {"iters", {first, last}}, {"splits", nlohmann::json::object()}};
            std::vector<std::pair<std::string, IterationCurve>> curves;
            for (const std::string& name : split_list(o->splits)) {
              if (name == "train") data.train_count = o->count ? o->count : data.train_count;
              if (name == "val") data.val_count = o->count ? o->count : data.val_count;
              if (name == "hard") data.hard_count = o->count ? o->count : data.hard_count;
              const Split split = load_split(data, name);
              const IterationCurve c = evaluate_curve(*model, split, last, o->batch, [&](int64_t done, int64_t total) {
                if (interactive) std::fprintf(stderr, "\r%s: %lld/%lld examples", name.c_str(),
                                              static_cast<long long>(done), static_cast<long long>(total));
              });
              if (interactive) std::fprintf(stderr, "\r%60s\r", "");
              auto from_first = [&](const std::vector<double>& v) {
                return std::vector<double>(v.begin() + (first - 1), v.end());
              };
              std::vector<int64_t> iterations;
              for (int64_t t = first; t <= last; ++t) iterations.push_back(t);
              out["splits"][name] = {{"count", c.count},
                                     {"positions", split.inputs.size(1)},
                                     {"iterations", iterations},
                                     {"exact", from_first(c.exact)},
                                     {"per_position", from_first(c.per_position)},
                                     {"relative_step", from_first(c.relative_step)},
                                     {"unchanged", from_first(c.unchanged)}};
              curves.emplace_back(name, c);
            }
            write_file_atomic(o->dir + "/eval.json", out.dump() + "\n");
            if (o->json) {
              std::cout << out.dump(2) << "\n";
              return;
            }
            std::vector<int64_t> rows;
            for (int64_t t : {1, 5, 10, 30, 50, 100, 200, 300, 500})
              if (t >= first && t <= last) rows.push_back(t);
            if (rows.empty() || rows.back() != last) rows.push_back(last);
            for (const auto& [name, c] : curves) {
              std::printf("%s (%lld examples, %lld positions)\n", name.c_str(), static_cast<long long>(c.count),
                          static_cast<long long>(out["splits"][name]["positions"].get<int64_t>()));
              std::printf("  %6s %9s %12s %14s %10s\n", "iters", "exact %", "position %", "relative step", "settled %");
              for (int64_t t : rows)
                std::printf("  %6lld %9.2f %12.2f %14.3e %10.2f\n", static_cast<long long>(t), 100 * c.exact[t - 1],
                            100 * c.per_position[t - 1], c.relative_step[t - 1], 100 * c.unchanged[t - 1]);
            }
            std::printf("wrote %s/eval.json\n", o->dir.c_str());
          }};
}

}  // namespace looplab::cli
