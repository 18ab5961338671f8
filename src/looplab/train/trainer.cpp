#include "looplab/train/trainer.h"

#include <ATen/CPUGeneratorImpl.h>

#include <chrono>
#include <limits>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <functional>
#include <optional>
#include <sstream>

#include "looplab/eval/evaluate.h"
#include "looplab/run/run_folder.h"
#include "looplab/tasks/registry.h"
#include "looplab/util/progress.h"
#include "looplab/util/system.h"
#include "looplab/io/atomic_file.h"
#include "looplab/io/tensor_io.h"
#include "looplab/run/model_folder.h"
#include "looplab/runtime.h"
#include "looplab/train/adamw.h"
#include "looplab/train/halt_loss.h"
#include "looplab/train/jacobian_penalty.h"
#include "looplab/train/weight_average.h"
#include "looplab/train/progressive_loss.h"
#include "looplab/train/schedule.h"
#include "looplab/util/error.h"
#include "looplab/util/random.h"

namespace looplab {

using json = nlohmann::json;

namespace {

// AdamW with the paper's settings: betas (0.9, 0.999), eps 1e-8; ATen's fused update on CUDA.
AdamW make_optimizer(LoopedTransformerImpl& model, const RunSpec& spec) {
  return AdamW(model.named_parameters(), {0.9, 0.999, 1e-8, spec.train.weight_decay, model.device().is_cuda()});
}

struct Checkpoint {
  int64_t epochs_done = 0;
  std::string rng_state;
  // The best epoch by val exact accuracy, ties broken by per-position accuracy (a task whose
  // exact accuracy stays 0 for a while keeps its best model).
  double best_val = -1, best_val_position = -1;
  int64_t best_epoch = -1;
};

// The checkpoint holds the trained weights ("model."), AdamW's state ("adamw.") and, with --ema,
// the weight average ("ema.").
void save_checkpoint(const std::string& dir, LoopedTransformerImpl& model, const AdamW& optimizer,
                     const WeightAverage* ema, const Checkpoint& c) {
  std::map<std::string, torch::Tensor> tensors;
  for (const auto& item : model.named_parameters()) tensors["model." + item.key()] = item.value();
  for (const auto& [name, t] : optimizer.state()) tensors["adamw." + name] = t;
  if (ema)
    for (const auto& [name, t] : ema->named()) tensors["ema." + name] = t;
  write_tensors(RunFolder(dir).file(RunFolder::kCheckpoint), tensors,
                {{"epochs_done", std::to_string(c.epochs_done)},
                 {"rng", c.rng_state},
                 {"best_val", json(c.best_val).dump()},
                 {"best_val_position", json(c.best_val_position).dump()},
                 {"best_epoch", std::to_string(c.best_epoch)}});
}

Checkpoint load_checkpoint(const std::string& dir, LoopedTransformerImpl& model, AdamW& optimizer, WeightAverage* ema) {
  const std::string path = RunFolder(dir).file(RunFolder::kCheckpoint);
  std::map<std::string, std::string> meta;
  const TensorMap records = read_safetensors(path, &meta);
  std::map<std::string, torch::Tensor> weights, state, average;
  for (const auto& [name, r] : records) {
    if (name.rfind("model.", 0) == 0) weights[name.substr(6)] = tensor_from_record(r);
    else if (name.rfind("adamw.", 0) == 0) state[name.substr(6)] = tensor_from_record(r);
    else if (name.rfind("ema.", 0) == 0) average[name.substr(4)] = tensor_from_record(r);
  }
  torch::NoGradGuard no_grad;
  for (auto& item : model.named_parameters()) {
    auto it = weights.find(item.key());
    if (it == weights.end() || it->second.sizes() != item.value().sizes())
      throw Error(path + ": weights for '" + item.key() + "' are missing or misshapen");
    item.value().copy_(it->second);
  }
  optimizer.load_state(state, path);
  if (ema) ema->load(average, path);
  Checkpoint c;
  try {
    c.epochs_done = std::stoll(meta.at("epochs_done"));
    c.rng_state = meta.at("rng");
    c.best_val = json::parse(meta.at("best_val")).get<double>();
    if (meta.count("best_val_position")) c.best_val_position = json::parse(meta.at("best_val_position")).get<double>();
    c.best_epoch = std::stoll(meta.at("best_epoch"));
  } catch (const std::exception&) {
    throw Error(path + ": checkpoint metadata is missing or corrupt");
  }
  return c;
}

// One Gaussian projection per example for the Jacobian penalty, [rows of this rank, L, d]: the
// whole batch's from a seed drawn from the run's generator (so a resumed run draws the same),
// this rank's rows of it (so data parallelism gives the same penalty as one process).
torch::Tensor projections(Random& rng, int64_t batch_rows, int64_t first, int64_t rows, const torch::Tensor& like) {
  const uint64_t seed = static_cast<uint64_t>(rng.uniform_int(0, std::numeric_limits<int64_t>::max()));
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  const torch::Tensor v = at::randn({batch_rows, like.size(1), like.size(2)}, generator, torch::kFloat32);
  return v.narrow(0, first, rows).to(like.device(), like.scalar_type());
}

void run_epochs(const std::string& dir, const RunSpec& spec, LoopedTransformerImpl& model, AdamW& optimizer,
                WeightAverage* ema, Random& rng, Checkpoint state, Ranks& ranks) {
  // --recompute is a request for memory over speed: glibc's own allocation policy keeps the
  // peak at what is alive at once (runtime.h).
  if (spec.train.recompute) configure_allocator(AllocatorPolicy::kFootprint);
  const TrainOptions& o = spec.train;
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
  if (leader) {
    std::printf("training %s: %s recall, %s norm, width %lld; %lld examples, %lld batches of %lld; epochs %lld..%lld\n",
                spec.model.task.c_str(), to_string(spec.model.recall).c_str(), to_string(spec.model.norm).c_str(),
                static_cast<long long>(spec.model.width), static_cast<long long>(n_examples),
                static_cast<long long>(batches), static_cast<long long>(o.batch),
                static_cast<long long>(state.epochs_done + 1), static_cast<long long>(o.epochs));
    if (ranks.size() > 1)
      std::printf("data-parallel on %d ranks (%s), each with about %lld of every batch and %d thread(s)\n", ranks.size(),
                  ranks.backend().c_str(), static_cast<long long>(o.batch / ranks.size()), torch::get_num_threads());
    std::fflush(stdout);
  }
  auto params = model.parameters();

  // --gradient (TrainOptions::gradient): phantom and implicit take the gradient at the fixed point.
  const bool fixed_point = o.gradient == "phantom" || o.gradient == "implicit";
  FixedPointGradient fixed_point_options;
  fixed_point_options.implicit = o.gradient == "implicit";
  fixed_point_options.max_iters = T;
  fixed_point_options.tolerance = o.tolerance;
  fixed_point_options.phantom_steps = o.phantom_steps;
  fixed_point_options.phantom_damping = o.phantom_damping;
  for (int64_t epoch = state.epochs_done; epoch < o.epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    int64_t forward_converged = 0, adjoint_converged = 0;  // batches, this rank's
    double jacobian_sum = 0;                                // the whole batches' penalties
    double halt_loss_sum = 0, halt_accuracy_sum = 0;        // and halting heads' loss and accuracy
    const bool halt_head = model.config().halt_head;
    const double lr = learning_rate(o.lr, epoch, o.cooldown_epoch);
    model.train();
    const std::vector<int64_t> order = rng.permutation(n_examples);
    double loss_sum = 0;
    int64_t right = 0;
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
      double loss = 0;
      torch::Tensor logits, loss_state;  // loss_state: where the loss was read, for the Jacobian penalty
      if (fixed_point) {  // phantom or implicit (alpha is 1)
        FixedPointStats st;
        const LossResult r = fixed_point_backward(model, input, target, fixed_point_options, 1.0, &st);
        loss = r.loss, logits = r.logits, loss_state = r.state;
        forward_converged += st.forward_converged;
        adjoint_converged += st.adjoint_converged;
      } else if (o.alpha > 0) {
        // one-step: the same n + k iterations, the gradient through the last only.
        const LossResult r = o.gradient == "one-step"
                                 ? progressive_backward(model, input, target, n + k - 1, 1, o.alpha, o.recompute)
                                 : progressive_backward(model, input, target, n, k, o.alpha, o.recompute);
        loss += o.alpha * r.loss;
        logits = r.logits, loss_state = r.state;
      }
      if (o.alpha < 1) {
        const LossResult r = progressive_backward(model, input, target, 0, T, 1 - o.alpha, o.recompute);
        loss += (1 - o.alpha) * r.loss;
        if (!logits.defined()) logits = r.logits, loss_state = r.state;
      }
      double jacobian = 0;
      if (o.jacobian_weight > 0) {
        const torch::Tensor v = projections(rng, batch_hi - batch_lo, lo - batch_lo, hi - lo, loss_state);
        jacobian = jacobian_backward(model, input, loss_state, v, o.jacobian_weight);
      }
      HaltLoss halt;
      if (halt_head)
        halt = halt_backward(model, loss_state, (predict(logits, model) == target).all(1), o.halt_weight);
      const double batch_right = share > 0 ? (predict(logits, model) == target).all(1).sum().item<double>() : 0.0;
      // The whole batch's mean gradient, loss and right answers, the same on every rank.
      std::vector<double> sums{share * loss, batch_right, share * jacobian, share * halt.loss, share * halt.accuracy};
      ranks.sum_gradients(params, share, sums);
      loss = sums[0];
      jacobian_sum += sums[2];
      halt_loss_sum += sums[3], halt_accuracy_sum += sums[4];
      if (!std::isfinite(loss))
        throw Error("training diverged: non-finite loss in epoch " + std::to_string(epoch) + ", batch " +
                    std::to_string(b) + " (the run folder keeps the last good epoch)");
      torch::nn::utils::clip_grad_norm_(params, o.clip);
      optimizer.step(lr);
      if (ema) ema->update();
      loss_sum += loss;
      right += std::llround(sums[1]);
      if (progress) {
        char note[32];
        std::snprintf(note, sizeof note, "loss %.4f", loss_sum / (b + 1));
        (*progress)(b + 1, batches, note);
      }
    }
    if (progress) progress->clear();
    model.eval();
    // With --ema the model holds the weight average from here to the files written below: val
    // accuracy, best.safetensors and model.safetensors are the average's.
    if (ema) ema->swap();
    // Each rank counts its part of the val split; the sums give every rank the same accuracy.
    const auto [val_lo, val_hi] = ranks.part(0, val_split.size());
    const RightCounts mine = count_right(model, val_split, T, o.eval_batch, val_lo, val_hi);
    std::vector<double> counts{static_cast<double>(mine.examples), static_cast<double>(mine.exact),
                               static_cast<double>(mine.positions), static_cast<double>(mine.positions_right)};
    ranks.sum(counts);
    const Accuracy val_accuracy =
        RightCounts{std::llround(counts[0]), std::llround(counts[1]), std::llround(counts[2]), std::llround(counts[3])}.accuracy();
    const double val = val_accuracy.exact;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    // Write order keeps a kill safe: the best weights, the metrics, the latest weights, and
    // last the checkpoint that says this epoch is done (a kill before it redoes the epoch).
    if (val > state.best_val || (val == state.best_val && val_accuracy.per_position > state.best_val_position)) {
      state.best_val = val;
      state.best_val_position = val_accuracy.per_position;
      state.best_epoch = epoch;
      if (leader) save_model(dir, model, RunFolder::kBest);
    }
    EpochMetrics line;
    line.epoch = epoch;
    line.lr = lr;
    line.loss = loss_sum / batches;
    line.train_exact = static_cast<double>(right) / n_examples;
    line.val_exact = val;
    line.val_per_position = val_accuracy.per_position;
    if (fixed_point) line.forward_converged = static_cast<double>(forward_converged) / batches;
    if (o.gradient == "implicit") line.adjoint_converged = static_cast<double>(adjoint_converged) / batches;
    if (o.jacobian_weight > 0) line.jacobian = jacobian_sum / batches;
    if (halt_head) line.halt_loss = halt_loss_sum / batches, line.halt_accuracy = halt_accuracy_sum / batches;
    line.val_iters = T;
    line.seconds = seconds;
    line.peak_rss_mib = peak_rss_mib();
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
    save_checkpoint(dir, model, optimizer, ema, state);
    std::printf(
        "epoch %3lld/%lld  lr %.2e  loss %.4f  train %5.1f%%  val %5.1f%% (positions %5.1f%%, T=%lld)  %.1f s  peak %.0f MiB\n",
        static_cast<long long>(epoch + 1), static_cast<long long>(o.epochs), lr, loss_sum / batches,
        100.0 * right / n_examples, 100.0 * val, 100.0 * val_accuracy.per_position, static_cast<long long>(T), seconds,
        peak_rss_mib());
    if (fixed_point)
      std::printf("           %s: forward solves converged in %.0f%% of the batches%s\n", o.gradient.c_str(),
                  100.0 * *line.forward_converged,
                  line.adjoint_converged ? (", adjoint solves in " + std::to_string(std::lround(100 * *line.adjoint_converged)) + "%").c_str() : "");
    if (line.halt_loss)
      std::printf("           halting head: loss %.4f, right about the answer for %.1f%% of the examples\n", *line.halt_loss,
                  100.0 * *line.halt_accuracy);
    if (line.jacobian) std::printf("           jacobian penalty: ||df/dx||_F^2 / (L d) %.4g on average\n", *line.jacobian);
    std::fflush(stdout);
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
    c = load_checkpoint(dir, *model, optimizer, ema ? &*ema : nullptr);
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
    // Files named on the command line are relative to where it ran; training.json keeps them
    // absolute, and files inside the run folder relative to it.
    spec.data = with_absolute_files(spec.data);
    // The folder appears whole: a new one is made under a temporary name beside it (its data
    // pool, config.json, training.json) and renamed into place, so that after a kill at any
    // moment it is absent or holds settings a resume starts from. A folder that exists already
    // (one the user made, holding data files) is filled in place, its settings last.
    std::string target = std::filesystem::path(dir).lexically_normal().string();
    while (target.size() > 1 && target.back() == '/') target.pop_back();
    const bool fresh = !std::filesystem::exists(target);
    const std::string building = fresh ? target + ".partial" : target;
    if (fresh) {
      std::filesystem::remove_all(building);  // left by a killed start
      make_directories(building);
    }
    // A data file inside the run folder is kept relative to it, so that it travels with the folder.
    const std::filesystem::path home = std::filesystem::absolute(target).lexically_normal();
    for (std::string* f : {&spec.data.train_file, &spec.data.val_file, &spec.data.hard_file, &spec.data.data_file}) {
      if (f->empty()) continue;
      const std::filesystem::path inside = std::filesystem::path(*f).lexically_normal().lexically_relative(home);
      if (!inside.empty() && *inside.begin() != "..") {
        *f = inside.string();
        spec.data.base_dir = target;
      }
    }
    task(spec.data.task).prepare(spec.data, building, torch::get_num_threads());
    const RunFolder made(building);
    write_file_atomic(made.file(RunFolder::kConfig), to_json(spec.model).dump(2) + "\n");
    made.write_spec(spec);
    if (fresh) {
      std::error_code ec;
      std::filesystem::rename(building, target, ec);
      if (ec) throw Error(target + ": cannot move the new run folder into place from " + building + ": " + ec.message());
    }
    if (spec.data.base_dir == building) spec.data.base_dir = target;
    return spec;
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
