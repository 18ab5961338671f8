#include "looplab/train/trainer.h"

#include <ATen/CPUGeneratorImpl.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <optional>

#include "looplab/eval/evaluate.h"
#include "looplab/run/checkpoint.h"
#include "looplab/run/model_folder.h"
#include "looplab/run/run_folder.h"
#include "looplab/platform/runtime.h"
#include "looplab/tasks/registry.h"
#include "looplab/train/adamw.h"
#include "looplab/train/halt_loss.h"
#include "looplab/train/jacobian_penalty.h"
#include "looplab/train/progressive_loss.h"
#include "looplab/train/schedule.h"
#include "looplab/train/weight_average.h"
#include "looplab/util/error.h"
#include "looplab/util/progress.h"
#include "looplab/util/random.h"
#include "looplab/util/system.h"

namespace looplab {

namespace {

// AdamW with the paper's settings: betas (0.9, 0.999), eps 1e-8; ATen's fused update on CUDA.
AdamW make_optimizer(LoopedTransformerImpl& model, const RunSpec& spec) {
  return AdamW(model.named_parameters(), {0.9, 0.999, 1e-8, spec.train.weight_decay, model.device().is_cuda()});
}

// The checkpoint's groups (run/checkpoint.h): the trained weights, AdamW's state and, with
// --ema, the weight average.
void save_checkpoint(const RunFolder& run, LoopedTransformerImpl& model, const AdamW& optimizer,
                     const WeightAverage* ema, Checkpoint c) {
  for (const auto& item : model.named_parameters()) c.groups["model"][item.key()] = item.value();
  c.groups["adamw"] = optimizer.state();
  if (ema) c.groups["ema"] = ema->named();
  write_checkpoint(run, c);
}

Checkpoint load_checkpoint(const RunFolder& run, LoopedTransformerImpl& model, AdamW& optimizer, WeightAverage* ema) {
  Checkpoint c = read_checkpoint(run);
  const std::string path = run.file(RunFolder::kCheckpoint);
  const auto& weights = c.groups["model"];
  torch::NoGradGuard no_grad;
  for (auto& item : model.named_parameters()) {
    auto it = weights.find(item.key());
    if (it == weights.end() || it->second.sizes() != item.value().sizes())
      throw Error(path + ": weights for '" + item.key() + "' are missing or misshapen");
    item.value().copy_(it->second);
  }
  optimizer.load_state(c.groups["adamw"], path);
  if (ema) ema->load(c.groups["ema"], path);
  c.groups.clear();
  return c;
}

// One Gaussian projection per example for the Jacobian penalty, [rows of this rank, L, d]: the
// whole batch's from a seed drawn from the run's generator (so a resumed run draws the same),
// this rank's rows of it (so data parallelism gives the same penalty as one process).
// `input`: this rank's rows [rows, L, ...]; the state is [rows, L, width] in the model's dtype.
torch::Tensor projections(Random& rng, int64_t batch_rows, int64_t first, int64_t rows, const torch::Tensor& input,
                          const LoopedTransformerImpl& model) {
  const uint64_t seed = static_cast<uint64_t>(rng.uniform_int(0, std::numeric_limits<int64_t>::max()));
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  const torch::Tensor v = at::randn({batch_rows, input.size(1), model.config().width}, generator, torch::kFloat32);
  return v.narrow(0, first, rows).to(model.device(), model.dtype());
}

// What one batch adds to its epoch's figures, summed over the ranks (each rank's part weighted
// by its share of the batch): the same on every rank after the all-reduce.
struct BatchFigures {
  double loss = 0, right = 0, jacobian = 0, halt_loss = 0, halt_accuracy = 0;
  // Averages the gradients of `params` over the ranks and sums these figures with them (one
  // collective); `share`: this rank's part of the batch.
  void all_reduce(Ranks& ranks, const std::vector<torch::Tensor>& params, double share) {
    std::vector<double> v{share * loss, right, share * jacobian, share * halt_loss, share * halt_accuracy};
    ranks.sum_gradients(params, share, v);
    loss = v[0], right = v[1], jacobian = v[2], halt_loss = v[3], halt_accuracy = v[4];
  }
};

// An epoch's figures as its batches add up.
struct EpochFigures {
  double loss = 0, jacobian = 0, halt_loss = 0, halt_accuracy = 0;
  int64_t right = 0;
  int64_t forward_converged = 0, adjoint_converged = 0;  // batches whose solves converged (this rank's)
  void add(const BatchFigures& b) {
    loss += b.loss, jacobian += b.jacobian, halt_loss += b.halt_loss, halt_accuracy += b.halt_accuracy;
    right += std::llround(b.right);
  }
};

// The val split's accuracy at T iterations: each rank counts its part, the sums give every rank
// the same figures.
Accuracy val_accuracy(LoopedTransformerImpl& model, const Split& val, int64_t T, int64_t batch, Ranks& ranks) {
  const auto [lo, hi] = ranks.part(0, val.size());
  const RightCounts mine = count_right(model, val, T, batch, lo, hi);
  std::vector<double> c{static_cast<double>(mine.examples), static_cast<double>(mine.exact),
                        static_cast<double>(mine.positions), static_cast<double>(mine.positions_right)};
  ranks.sum(c);
  return RightCounts{std::llround(c[0]), std::llround(c[1]), std::llround(c[2]), std::llround(c[3])}.accuracy();
}

// The epoch's line of metrics.jsonl.
EpochMetrics epoch_line(int64_t epoch, double lr, const EpochFigures& f, int64_t batches, int64_t examples,
                        const Accuracy& val, int64_t T, GradientMethod method, const TrainOptions& o, bool halt_head,
                        double seconds) {
  EpochMetrics line;
  line.epoch = epoch;
  line.lr = lr;
  line.loss = f.loss / batches;
  line.train_exact = static_cast<double>(f.right) / examples;
  line.val_exact = val.exact;
  line.val_per_position = val.per_position;
  if (at_fixed_point(method)) line.forward_converged = static_cast<double>(f.forward_converged) / batches;
  if (method == GradientMethod::kImplicit) line.adjoint_converged = static_cast<double>(f.adjoint_converged) / batches;
  if (o.jacobian_weight > 0) line.jacobian = f.jacobian / batches;
  if (halt_head) line.halt_loss = f.halt_loss / batches, line.halt_accuracy = f.halt_accuracy / batches;
  line.val_iters = T;
  line.seconds = seconds;
  line.peak_rss_mib = peak_rss_mib();
  return line;
}

void print_start(const RunSpec& spec, int64_t examples, int64_t batches, int64_t first_epoch, const Ranks& ranks) {
  const TrainOptions& o = spec.train;
  std::printf("training %s: %s recall, %s norm, width %lld; %lld examples, %lld batches of %lld; epochs %lld..%lld\n",
              spec.model.task.c_str(), to_string(spec.model.recall).c_str(), to_string(spec.model.norm).c_str(),
              static_cast<long long>(spec.model.width), static_cast<long long>(examples),
              static_cast<long long>(batches), static_cast<long long>(o.batch), static_cast<long long>(first_epoch),
              static_cast<long long>(o.epochs));
  if (ranks.size() > 1)
    std::printf("data-parallel on %d ranks (%s), each with about %lld of every batch and %d thread(s)\n", ranks.size(),
                ranks.backend().c_str(), static_cast<long long>(o.batch / ranks.size()), torch::get_num_threads());
  std::fflush(stdout);
}

void print_epoch(const EpochMetrics& line, const TrainOptions& o) {
  std::printf(
      "epoch %3lld/%lld  lr %.2e  loss %.4f  train %5.1f%%  val %5.1f%% (positions %5.1f%%, T=%lld)  %.1f s  peak %.0f MiB\n",
      static_cast<long long>(line.epoch + 1), static_cast<long long>(o.epochs), line.lr, line.loss,
      100.0 * line.train_exact, 100.0 * line.val_exact, 100.0 * *line.val_per_position,
      static_cast<long long>(line.val_iters), line.seconds, line.peak_rss_mib);
  if (line.forward_converged)
    std::printf("           %s: forward solves converged in %.0f%% of the batches%s\n", o.gradient.c_str(),
                100.0 * *line.forward_converged,
                line.adjoint_converged ? (", adjoint solves in " + std::to_string(std::lround(100 * *line.adjoint_converged)) + "%").c_str() : "");
  if (line.halt_loss)
    std::printf("           halting head: loss %.4f, right about the answer for %.1f%% of the examples\n", *line.halt_loss,
                100.0 * *line.halt_accuracy);
  if (line.jacobian) std::printf("           jacobian penalty: ||df/dx||_F^2 / (L d) %.4g on average\n", *line.jacobian);
  std::fflush(stdout);
}

// Everything of one step but AdamW's update: the loss by the chosen gradient method, the
// penalty and the halting head, backward into `model`'s gradients (this rank's part, weighted
// `share`); the figures before the all-reduce.
BatchFigures batch_backward(LoopedTransformerImpl& model, const TrainOptions& o, GradientMethod method,
                            const FixedPointGradient& fixed_point, const torch::Tensor& input, const torch::Tensor& target,
                            int64_t T, int64_t n, int64_t k, double share, const torch::Tensor& projection,
                            EpochFigures& epoch) {
  BatchFigures f;
  torch::Tensor logits, loss_state;  // loss_state: where the loss was read, for the Jacobian penalty
  if (at_fixed_point(method)) {  // alpha is 1
    FixedPointStats st;
    const LossResult r = fixed_point_backward(model, input, target, fixed_point, 1.0, &st);
    f.loss = r.loss, logits = r.logits, loss_state = r.state;
    epoch.forward_converged += st.forward_converged;
    epoch.adjoint_converged += st.adjoint_converged;
  } else if (o.alpha > 0) {
    // one-step: the same n + k iterations, the gradient through the last only.
    const LossResult r = method == GradientMethod::kOneStep
                             ? progressive_backward(model, input, target, n + k - 1, 1, o.alpha, o.recompute)
                             : progressive_backward(model, input, target, n, k, o.alpha, o.recompute);
    f.loss += o.alpha * r.loss;
    logits = r.logits, loss_state = r.state;
  }
  if (o.alpha < 1) {
    const LossResult r = progressive_backward(model, input, target, 0, T, 1 - o.alpha, o.recompute);
    f.loss += (1 - o.alpha) * r.loss;
    if (!logits.defined()) logits = r.logits, loss_state = r.state;
  }
  if (o.jacobian_weight > 0) f.jacobian = jacobian_backward(model, input, loss_state, projection, o.jacobian_weight);
  if (model.config().halt_head) {
    const HaltLoss halt = halt_backward(model, loss_state, (predict(logits, model) == target).all(1), o.halt_weight);
    f.halt_loss = halt.loss, f.halt_accuracy = halt.accuracy;
  }
  f.right = share > 0 ? (predict(logits, model) == target).all(1).sum().item<double>() : 0.0;
  return f;
}

void run_epochs(const std::string& dir, const RunSpec& spec, LoopedTransformerImpl& model, AdamW& optimizer,
                WeightAverage* ema, Random& rng, Checkpoint state, Ranks& ranks) {
  // --recompute is a request for memory over speed: glibc's own allocation policy keeps the
  // peak at what is alive at once (platform/runtime.h).
  if (spec.train.recompute) configure_allocator(AllocatorPolicy::kFootprint);
  const TrainOptions& o = spec.train;
  const GradientMethod method = parse_gradient_method(o.gradient);
  const bool fixed = spec.model.recall == Recall::kFixed;
  const int64_t T = fixed ? 1 : o.training_iters;  // the fixed baseline trains with one pass
  const Split train_split = load_split(spec.data, "train");
  const Split val_split = load_split(spec.data, "val");
  const RunFolder run(dir);
  // A killed run may have written one more line than its checkpoint holds: that epoch is redone.
  std::vector<EpochMetrics> metrics;
  for (const EpochMetrics& m : run.metrics())
    if (m.epoch < state.epochs_done) metrics.push_back(m);
  const int64_t n_examples = train_split.size();
  const int64_t batches = (n_examples + o.batch - 1) / o.batch;
  const bool leader = ranks.leader();  // the one rank that writes and prints
  if (leader) print_start(spec, n_examples, batches, state.epochs_done + 1, ranks);
  auto params = model.parameters();
  FixedPointGradient fixed_point;  // phantom and implicit
  fixed_point.implicit = method == GradientMethod::kImplicit;
  fixed_point.max_iters = T;
  fixed_point.batch_tolerance = o.batch_tolerance;
  fixed_point.phantom_steps = o.phantom_steps;
  fixed_point.phantom_damping = o.phantom_damping;

  for (int64_t epoch = state.epochs_done; epoch < o.epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    const double lr = learning_rate(o.lr, epoch, o.cooldown_epoch);
    model.train();
    const std::vector<int64_t> order = rng.permutation(n_examples);
    EpochFigures figures;
    std::optional<Progress> progress;
    if (leader) progress.emplace("epoch " + std::to_string(epoch + 1) + "/" + std::to_string(o.epochs), Progress::Log::kNone);
    for (int64_t b = 0; b < batches; ++b) {
      const int64_t batch_lo = b * o.batch, batch_hi = std::min(n_examples, batch_lo + o.batch);
      // This rank's part of the batch, weighted by its share; a rank left without examples (a
      // last batch smaller than the ranks) runs one with weight 0, so that every rank has
      // gradients for the same parameters.
      auto [lo, hi] = ranks.part(batch_lo, batch_hi);
      const double share = static_cast<double>(hi - lo) / static_cast<double>(batch_hi - batch_lo);
      if (lo == hi) hi = lo + 1, lo = batch_lo, hi = batch_lo + 1;
      const torch::Tensor idx = torch::tensor(std::vector<int64_t>(order.begin() + lo, order.begin() + hi));
      const torch::Tensor input = train_split.inputs.index_select(0, idx).to(model.device(), model.dtype());
      const torch::Tensor target = train_split.targets.index_select(0, idx).to(model.device());
      // n ~ U{0..T-1}, k ~ U{1..T-n}
      const int64_t n = fixed ? 0 : rng.uniform_int(0, T - 1);
      const int64_t k = fixed ? 1 : rng.uniform_int(1, T - n);
      optimizer.zero_grad();
      // The penalty's projections: drawn after n and k, as the run's generator always drew them.
      BatchFigures f = batch_backward(model, o, method, fixed_point, input, target, T, n, k, share,
                                      o.jacobian_weight > 0 ? projections(rng, batch_hi - batch_lo, lo - batch_lo, hi - lo, input, model)
                                                            : torch::Tensor(),
                                      figures);
      f.all_reduce(ranks, params, share);
      if (!std::isfinite(f.loss))
        throw Error("training diverged: non-finite loss in epoch " + std::to_string(epoch) + ", batch " +
                    std::to_string(b) + " (the run folder keeps the last good epoch)");
      torch::nn::utils::clip_grad_norm_(params, o.clip);
      optimizer.step(lr);
      if (ema) ema->update();
      figures.add(f);
      if (progress) {
        char note[32];
        std::snprintf(note, sizeof note, "loss %.4f", figures.loss / (b + 1));
        (*progress)(b + 1, batches, note);
      }
    }
    if (progress) progress->clear();
    model.eval();
    // With --ema the model holds the weight average from here to the files written below: val
    // accuracy, best.safetensors and model.safetensors are the average's.
    if (ema) ema->swap();
    const Accuracy val = val_accuracy(model, val_split, T, o.eval_batch, ranks);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const EpochMetrics line =
        epoch_line(epoch, lr, figures, batches, n_examples, val, T, method, o, model.config().halt_head, seconds);

    // Write order keeps a kill safe: the best weights, the metrics, the latest weights, and
    // last the checkpoint that says this epoch is done (a kill before it redoes the epoch).
    if (val.exact > state.best_val || (val.exact == state.best_val && val.per_position > state.best_val_position)) {
      state.best_val = val.exact;
      state.best_val_position = val.per_position;
      state.best_epoch = epoch;
      if (leader) save_model(dir, model, RunFolder::kBest);
    }
    metrics.push_back(line);
    state.epochs_done = epoch + 1;
    state.rng_state = rng.state();
    if (leader) {
      write_metrics(run.file(RunFolder::kMetrics), metrics);
      save_model(dir, model);
    }
    if (ema) {
      ema->swap();  // the trained weights again
      if (leader) save_model(dir, model, RunFolder::kRaw);
    }
    if (!leader) continue;
    save_checkpoint(run, model, optimizer, ema, state);
    print_epoch(line, o);
  }
  if (leader)
    std::printf("best val %.1f%% at epoch %lld; run folder %s\n", 100.0 * state.best_val,
                static_cast<long long>(state.best_epoch + 1), dir.c_str());
}

// The model and optimizer of a run, made from its seed (a run not started yet) or read from its
// checkpoint, then the epochs left. The two ways give the same weights as a run never stopped.
void train_from(const std::string& dir, const RunSpec& spec, torch::Device device, bool from_checkpoint, Ranks& ranks) {
  if (!from_checkpoint) torch::manual_seed(spec.train.seed);
  LoopedTransformer model(spec.model);
  model->to(device, parse_dtype(spec.train.dtype));
  model->set_mixed_precision(is_mixed_precision(spec.train.precision));
  AdamW optimizer = make_optimizer(*model, spec);
  Random rng(spec.train.seed);
  // Every rank made the same weights; rank 0's are made everyone's all the same, as PyTorch's
  // DistributedDataParallel does, so that no rank can drift from the start. The weight average
  // starts from them (a resumed run reads its own from the checkpoint).
  std::vector<torch::Tensor> weights;
  for (const auto& p : model->parameters()) weights.push_back(p.data());
  if (!from_checkpoint) ranks.broadcast(weights);
  std::optional<WeightAverage> ema;
  if (spec.train.ema > 0) ema.emplace(*model, spec.train.ema);
  Checkpoint c;
  if (from_checkpoint) {
    c = load_checkpoint(RunFolder(dir), *model, optimizer, ema ? &*ema : nullptr);
    rng.set_state(c.rng_state);
    ranks.broadcast(weights);
  }
  if (c.epochs_done >= spec.train.epochs) {
    if (ranks.leader()) std::printf("%s: all %lld epochs are done (raise the number of epochs to train further)\n", dir.c_str(),
                static_cast<long long>(spec.train.epochs));
    return;
  }
  run_epochs(dir, spec, *model, optimizer, ema ? &*ema : nullptr, rng, c, ranks);
}

// Rank 0 sets the folder up (`set_up` returns the settings it wrote) and tells the others,
// which wait for it and read those settings from the folder. One rank just sets it up.
void start(const std::string& dir, torch::Device device, Ranks& ranks, const std::function<RunSpec()>& set_up) {
  device = ranks.device_for(device);
  RunSpec spec;
  bool from_checkpoint = false;
  if (ranks.leader()) {
    try {
      spec = set_up();
    } catch (const std::exception& e) {
      ranks.announce("start", std::string("error: ") + e.what());
      throw;
    }
    from_checkpoint = RunFolder(dir).has(RunFolder::kCheckpoint);
    ranks.announce("start", from_checkpoint ? "checkpoint" : "new");
  } else {
    const std::string said = ranks.await("start");
    if (said.rfind("error: ", 0) == 0) throw Error("rank 0 could not start the run: " + said.substr(7));
    spec = RunFolder(dir).spec();
    from_checkpoint = said == "checkpoint";
  }
  try {
    train_from(dir, spec, device, from_checkpoint, ranks);
  } catch (const LostRank& e) {
    throw LostRank(std::string(e.what()) + "; " + dir + " keeps its last completed epoch: resume it with `looplab train --resume " +
                   dir + "` on every rank");
  }
}

}  // namespace

void train(const std::string& dir, const RunSpec& given, torch::Device device, Ranks& ranks) {
  start(dir, device, ranks, [&] {
    RunSpec spec = given;
    check(spec);
    if (is_mixed_precision(spec.train.precision) && !bf16_mixed_supported(device)) {
      if (spec.train.preset != "paper")
        throw Error("precision bf16-mixed needs a CUDA device or a CPU with AVX512-BF16 (this one emulates bfloat16 "
                    "products, slower than float32): use --precision float32");
      spec.train.precision = "float32";
      std::printf("precision float32: the paper preset's bf16-mixed needs a CUDA device or a CPU with AVX512-BF16\n");
    }
    const RunFolder run(dir);
    if (run.has(RunFolder::kCheckpoint)) throw Error(dir + ": already holds a run (resume it to continue it)");
    return create_run_folder(dir, spec, torch::get_num_threads());
  });
}

void resume(const std::string& dir, int64_t epochs, torch::Device device, Ranks& ranks) {
  start(dir, device, ranks, [&] {
    const RunFolder run(dir);
    if (!run.has(RunFolder::kTraining))
      throw Error(dir + ": no run to resume (no " + RunFolder::kTraining + "): start one with `looplab train ... --out " + dir +
                  "`");
    RunSpec spec = run.spec();
    if (spec.schema_version < 2)
      throw Error(run.file(RunFolder::kTraining) + ": schema_version " + std::to_string(spec.schema_version) +
                  ": a run of looplab's recipe before 2026-12-03 (a warm-up rising past epoch 9, weight decay on every "
                  "parameter, prefix sums fed as the bit), which this looplab no longer trains; it can still be "
                  "evaluated and analyzed, or trained again from the start in a new folder");
    try {
      check(spec);
    } catch (const OptionError& e) {  // a bad value in the file, not on the command line
      throw Error(run.file(RunFolder::kTraining) + ": training option " + e.what());
    }
    if (epochs > 0 && epochs != spec.train.epochs) {
      spec.train.epochs = epochs;
      check(spec);  // only the new epoch count can fail here
      run.write_spec(spec);
    }
    // A run killed after writing its settings but before its first checkpoint starts from its
    // beginning, exactly as `train` would have (issue 19).
    return spec;
  });
}

void train(const std::string& dir, const RunSpec& spec, torch::Device device) {
  Ranks one;
  train(dir, spec, device, one);
}

void resume(const std::string& dir, int64_t epochs, torch::Device device) {
  Ranks one;
  resume(dir, epochs, device, one);
}

}  // namespace looplab
