#include "looplab/train/trainer.h"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "looplab/eval/evaluate.h"
#include "looplab/io/atomic_file.h"
#include "looplab/io/tensor_io.h"
#include "looplab/model/model_dir.h"
#include "looplab/runtime.h"
#include "looplab/train/adamw.h"
#include "looplab/train/progressive_loss.h"
#include "looplab/train/schedule.h"
#include "looplab/util/error.h"
#include "looplab/util/random.h"

namespace looplab {

using json = nlohmann::json;

namespace {

constexpr const char* kTrainingFile = "training.json";
constexpr const char* kCheckpointFile = "checkpoint.safetensors";
constexpr const char* kMetricsFile = "metrics.jsonl";

std::string path_in(const std::string& dir, const std::string& file) { return dir + "/" + file; }

json to_json(const TrainOptions& o) {
  return {{"preset", o.preset},       {"lr", o.lr},
          {"epochs", o.epochs},       {"batch", o.batch},
          {"seed", o.seed},           {"max_iters", o.max_iters},
          {"alpha", o.alpha},         {"weight_decay", o.weight_decay},
          {"clip", o.clip},           {"cooldown_epoch", o.cooldown_epoch},
          {"eval_batch", o.eval_batch}, {"recompute", o.recompute},
          {"dtype", o.dtype}};
}

TrainOptions train_options_from_json(const json& j, const std::string& source) {
  TrainOptions o;
  try {
    o.preset = j.at("preset").get<std::string>();
    o.lr = j.at("lr").get<double>();
    o.epochs = j.at("epochs").get<int64_t>();
    o.batch = j.at("batch").get<int64_t>();
    o.seed = j.at("seed").get<uint64_t>();
    o.max_iters = j.at("max_iters").get<int64_t>();
    o.alpha = j.at("alpha").get<double>();
    o.weight_decay = j.at("weight_decay").get<double>();
    o.clip = j.at("clip").get<double>();
    o.cooldown_epoch = j.at("cooldown_epoch").get<int64_t>();
    o.eval_batch = j.at("eval_batch").get<int64_t>();
    o.recompute = j.at("recompute").get<bool>();
    o.dtype = j.at("dtype").get<std::string>();
  } catch (const json::exception& e) {
    throw Error(source + ": training options: " + e.what());
  }
  return o;
}

void write_training_file(const std::string& dir, const RunSpec& spec) {
  write_file_atomic(path_in(dir, kTrainingFile),
                    json{{"train", to_json(spec.train)}, {"data", to_json(spec.data)}}.dump(2) + "\n");
}

void check(const RunSpec& s) {
  const TrainOptions& o = s.train;
  auto need = [](bool ok, const std::string& why) {
    if (!ok) throw Error("invalid training option: " + why);
  };
  need(o.lr > 0, "--lr must be positive");
  need(o.epochs >= 1, "--epochs must be >= 1");
  need(o.batch >= 1 && o.eval_batch >= 1, "--batch must be >= 1");
  need(o.max_iters >= 1, "--max-iters must be >= 1");
  need(o.alpha >= 0 && o.alpha <= 1, "--alpha must lie in [0, 1]");
  need(o.clip > 0, "clip must be positive");
  parse_dtype(o.dtype);
  validate(s.model);
}

// AdamW with the paper's settings: betas (0.9, 0.999), eps 1e-8.
AdamW make_optimizer(LoopedTransformerImpl& model, const RunSpec& spec) {
  return AdamW(model.named_parameters(), {0.9, 0.999, 1e-8, spec.train.weight_decay});
}

// Peak resident memory of this process in MiB.
double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;
}

struct Checkpoint {
  int64_t epochs_done = 0;
  std::string rng_state;
  // The best epoch by val exact accuracy, ties broken by per-position accuracy (a task whose
  // exact accuracy stays 0 for a while, such as sudoku, still keeps its best model).
  double best_val = -1, best_val_position = -1;
  int64_t best_epoch = -1;
};

void save_checkpoint(const std::string& dir, LoopedTransformerImpl& model, const AdamW& optimizer,
                     const Checkpoint& c) {
  std::map<std::string, torch::Tensor> tensors;
  for (const auto& item : model.named_parameters()) tensors["model." + item.key()] = item.value();
  for (const auto& [name, t] : optimizer.state()) tensors["adamw." + name] = t;
  write_tensors(path_in(dir, kCheckpointFile), tensors,
                {{"epochs_done", std::to_string(c.epochs_done)},
                 {"rng", c.rng_state},
                 {"best_val", json(c.best_val).dump()},
                 {"best_val_position", json(c.best_val_position).dump()},
                 {"best_epoch", std::to_string(c.best_epoch)}});
}

Checkpoint load_checkpoint(const std::string& dir, LoopedTransformerImpl& model, AdamW& optimizer) {
  const std::string path = path_in(dir, kCheckpointFile);
  std::map<std::string, std::string> meta;
  const TensorMap records = read_safetensors(path, &meta);
  std::map<std::string, torch::Tensor> weights, state;
  for (const auto& [name, r] : records) {
    if (name.rfind("model.", 0) == 0) weights[name.substr(6)] = tensor_from_record(r);
    else if (name.rfind("adamw.", 0) == 0) state[name.substr(6)] = tensor_from_record(r);
  }
  torch::NoGradGuard no_grad;
  for (auto& item : model.named_parameters()) {
    auto it = weights.find(item.key());
    if (it == weights.end() || it->second.sizes() != item.value().sizes())
      throw Error(path + ": weights for '" + item.key() + "' are missing or misshapen");
    item.value().copy_(it->second);
  }
  optimizer.load_state(state, path);
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

// Lines of metrics.jsonl for epochs before `epochs_done` (a killed run may have written one
// more line than its checkpoint holds).
std::vector<std::string> kept_metrics(const std::string& dir, int64_t epochs_done) {
  std::vector<std::string> lines;
  const std::string path = path_in(dir, kMetricsFile);
  if (!std::filesystem::exists(path)) return lines;
  std::istringstream in(read_file(path));
  std::string line;
  while (std::getline(in, line)) {
    try {
      if (!line.empty() && json::parse(line).at("epoch").get<int64_t>() < epochs_done) lines.push_back(line);
    } catch (const json::exception&) {
      // A torn last line from a kill: dropped, its epoch is redone.
    }
  }
  return lines;
}

class ProgressLine {
 public:
  ProgressLine() : interactive_(isatty(fileno(stderr))) {}
  void update(int64_t epoch, int64_t epochs, int64_t batch, int64_t batches, double loss) {
    if (!interactive_) return;
    const int width = 24, filled = static_cast<int>(width * batch / std::max<int64_t>(batches, 1));
    std::fprintf(stderr, "\repoch %lld/%lld [%s%s] %lld/%lld loss %.4f ", static_cast<long long>(epoch + 1),
                 static_cast<long long>(epochs), std::string(filled, '#').c_str(),
                 std::string(width - filled, ' ').c_str(), static_cast<long long>(batch),
                 static_cast<long long>(batches), loss);
    std::fflush(stderr);
  }
  void clear() {
    if (interactive_) std::fprintf(stderr, "\r%80s\r", "");
  }

 private:
  bool interactive_;
};

void run_epochs(const std::string& dir, const RunSpec& spec, LoopedTransformerImpl& model, AdamW& optimizer,
                Random& rng, Checkpoint state) {
  // --recompute is a request for memory over speed: glibc's own allocation policy keeps the
  // peak at what is alive at once (runtime.h).
  if (spec.train.recompute) configure_allocator(AllocatorPolicy::kFootprint);
  const TrainOptions& o = spec.train;
  const bool fixed = spec.model.recall == Recall::kFixed;
  const int64_t T = fixed ? 1 : o.max_iters;  // the fixed baseline trains with one pass
  const Split train_split = load_split(spec.data, "train");
  const Split val_split = load_split(spec.data, "val");
  std::vector<std::string> metrics = kept_metrics(dir, state.epochs_done);
  const int64_t n_examples = train_split.size();
  const int64_t batches = (n_examples + o.batch - 1) / o.batch;
  std::printf("training %s: %s recall, %s norm, width %lld; %lld examples, %lld batches of %lld; epochs %lld..%lld\n",
              spec.model.task.c_str(), to_string(spec.model.recall).c_str(), to_string(spec.model.norm).c_str(),
              static_cast<long long>(spec.model.width), static_cast<long long>(n_examples),
              static_cast<long long>(batches), static_cast<long long>(o.batch),
              static_cast<long long>(state.epochs_done + 1), static_cast<long long>(o.epochs));
  std::fflush(stdout);
  ProgressLine progress;
  auto params = model.parameters();

  for (int64_t epoch = state.epochs_done; epoch < o.epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    const double lr = learning_rate(o.lr, epoch, o.cooldown_epoch);
    model.train();
    const std::vector<int64_t> order = rng.permutation(n_examples);
    double loss_sum = 0;
    int64_t right = 0;
    for (int64_t b = 0; b < batches; ++b) {
      const int64_t lo = b * o.batch, hi = std::min(n_examples, lo + o.batch);
      const torch::Tensor idx = torch::tensor(std::vector<int64_t>(order.begin() + lo, order.begin() + hi));
      const torch::Tensor input = train_split.inputs.index_select(0, idx).to(model.device(), model.dtype());
      const torch::Tensor target = train_split.targets.index_select(0, idx).to(model.device());
      // n ~ U{0..T-1}, k ~ U{1..T-n}
      const int64_t n = fixed ? 0 : rng.uniform_int(0, T - 1);
      const int64_t k = fixed ? 1 : rng.uniform_int(1, T - n);
      optimizer.zero_grad();
      double loss = 0;
      torch::Tensor logits;
      if (o.alpha > 0) {
        const LossResult r = progressive_backward(model, input, target, n, k, o.alpha, o.recompute);
        loss += o.alpha * r.loss;
        logits = r.logits;
      }
      if (o.alpha < 1) {
        const LossResult r = progressive_backward(model, input, target, 0, T, 1 - o.alpha, o.recompute);
        loss += (1 - o.alpha) * r.loss;
        if (!logits.defined()) logits = r.logits;
      }
      if (!std::isfinite(loss))
        throw Error("training diverged: non-finite loss in epoch " + std::to_string(epoch) + ", batch " +
                    std::to_string(b) + " (the run directory keeps the last good epoch)");
      torch::nn::utils::clip_grad_norm_(params, o.clip);
      optimizer.step(lr);
      loss_sum += loss;
      right += (predict(logits, spec.model.task) == target).all(1).sum().item<int64_t>();
      progress.update(epoch, o.epochs, b + 1, batches, loss_sum / (b + 1));
    }
    progress.clear();
    model.eval();
    const Accuracy val_accuracy = accuracy_after(model, val_split, T, o.eval_batch);
    const double val = val_accuracy.exact;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    // Write order keeps a kill safe: the best weights, the metrics, the latest weights, and
    // last the checkpoint that says this epoch is done (a kill before it redoes the epoch).
    if (val > state.best_val || (val == state.best_val && val_accuracy.per_position > state.best_val_position)) {
      state.best_val = val;
      state.best_val_position = val_accuracy.per_position;
      state.best_epoch = epoch;
      save_model(dir, model, kBestWeightsFile);
    }
    const json line = {{"epoch", epoch},
                       {"lr", lr},
                       {"loss", loss_sum / batches},
                       {"train_accuracy", static_cast<double>(right) / n_examples},
                       {"val_accuracy", val},
                       {"val_per_position", val_accuracy.per_position},
                       {"val_iters", T},
                       {"seconds", seconds},
                       {"peak_rss_mib", peak_rss_mib()}};
    metrics.push_back(line.dump());
    std::string text;
    for (const auto& l : metrics) text += l + "\n";
    write_file_atomic(path_in(dir, kMetricsFile), text);
    save_model(dir, model);
    state.epochs_done = epoch + 1;
    state.rng_state = rng.state();
    save_checkpoint(dir, model, optimizer, state);
    std::printf(
        "epoch %3lld/%lld  lr %.2e  loss %.4f  train %5.1f%%  val %5.1f%% (positions %5.1f%%, T=%lld)  %.1f s  peak %.0f MiB\n",
        static_cast<long long>(epoch + 1), static_cast<long long>(o.epochs), lr, loss_sum / batches,
        100.0 * right / n_examples, 100.0 * val, 100.0 * val_accuracy.per_position, static_cast<long long>(T), seconds,
        peak_rss_mib());
    std::fflush(stdout);
  }
  std::printf("best val %.1f%% at epoch %lld; run directory %s\n", 100.0 * state.best_val,
              static_cast<long long>(state.best_epoch + 1), dir.c_str());
}

}  // namespace

RunSpec preset_spec(const std::string& preset, const std::string& task, Recall recall, Norm norm) {
  RunSpec s;
  s.data = default_data_settings(task);
  s.train.preset = preset;
  if (preset == "paper") {
    s.model = default_config(task, recall, norm, 256);
    s.train.epochs = 100;
    s.train.lr = 1e-3;
  } else if (preset == "cpu") {
    // Chosen for 2 cores (docs/presets.md): width 64 with 4 heads, as SPEC's small-scale sketch.
    s.model = default_config(task, recall, norm, 64);
    s.model.heads = 4;
    s.train.epochs = 60;
    s.train.cooldown_epoch = 50;
    s.train.lr = 1e-3;
    if (task == "sudoku" || task == "chess") {
      // 81 (64) tokens with full attention cost ~3x a prefix-sums example: a smaller set, batch
      // 100, width 128 (docs/presets.md, sudoku experiments 1-2).
      s.model = default_config(task, recall, norm, 128);
      s.model.heads = 4;
      s.data.train_count = 4000, s.data.val_count = 1000, s.data.hard_count = 1000;
      s.train.batch = 100;
      s.train.epochs = 25;
      s.train.cooldown_epoch = 20;
    }
  } else {
    throw Error("unknown preset '" + preset + "' (expected paper or cpu)");
  }
  return s;
}

std::string weights_file(const std::string& dir, const std::string& which) {
  if (which != "best" && which != "latest") throw Error("--weights '" + which + "': expected best or latest");
  if (which == "best" && std::filesystem::exists(std::filesystem::path(dir) / kBestWeightsFile)) return kBestWeightsFile;
  return kWeightsFile;
}

DataSettings evaluation_data(const std::string& dir, const std::string& task) {
  if (std::filesystem::exists(std::filesystem::path(dir) / "training.json")) return read_run_spec(dir).data;
  return default_data_settings(task);
}

RunSpec read_run_spec(const std::string& dir) {
  RunSpec s;
  s.model = read_model_config(dir);
  const std::string path = path_in(dir, kTrainingFile);
  json j;
  try {
    j = json::parse(read_file(path));
  } catch (const json::exception& e) {
    throw Error(path + ": not valid JSON (" + e.what() + ")");
  }
  if (!j.is_object() || !j.contains("train") || !j.contains("data"))
    throw Error(path + ": expected the keys 'train' and 'data'");
  s.train = train_options_from_json(j["train"], path);
  s.data = data_settings_from_json(j["data"], path);
  s.data.base_dir = dir;
  return s;
}

void train(const std::string& dir, const RunSpec& given, torch::Device device) {
  RunSpec spec = given;
  check(spec);
  if (std::filesystem::exists(path_in(dir, kCheckpointFile)))
    throw Error(dir + ": already holds a run (use --resume " + dir + " to continue it)");
  // Files named on the command line are relative to where it ran; training.json keeps them
  // absolute, and files inside the run directory relative to it.
  for (std::string* f : {&spec.data.train_file, &spec.data.val_file, &spec.data.hard_file, &spec.data.data_file})
    if (!f->empty()) *f = std::filesystem::absolute(*f).string();
  make_directories(dir);
  prepare_pool(spec.data, dir);
  write_file_atomic(path_in(dir, kConfigFile), to_json(spec.model).dump(2) + "\n");
  write_training_file(dir, spec);
  torch::manual_seed(spec.train.seed);
  LoopedTransformer model(spec.model);
  model->to(device, parse_dtype(spec.train.dtype));
  AdamW optimizer = make_optimizer(*model, spec);
  Random rng(spec.train.seed);
  run_epochs(dir, spec, *model, optimizer, rng, Checkpoint{});
}

void resume(const std::string& dir, int64_t epochs, torch::Device device) {
  RunSpec spec = read_run_spec(dir);
  if (epochs > 0 && epochs != spec.train.epochs) {
    spec.train.epochs = epochs;
    write_training_file(dir, spec);
  }
  check(spec);
  LoopedTransformer model(spec.model);
  model->to(device, parse_dtype(spec.train.dtype));
  AdamW optimizer = make_optimizer(*model, spec);
  const Checkpoint c = load_checkpoint(dir, *model, optimizer);
  Random rng(spec.train.seed);
  rng.set_state(c.rng_state);
  if (c.epochs_done >= spec.train.epochs) {
    std::printf("%s: all %lld epochs are done (pass --epochs N to train further)\n", dir.c_str(),
                static_cast<long long>(spec.train.epochs));
    return;
  }
  run_epochs(dir, spec, *model, optimizer, rng, c);
}

}  // namespace looplab
