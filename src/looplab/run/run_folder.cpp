#include "looplab/run/run_folder.h"

#include "looplab/io/json_file.h"
#include "looplab/io/json_reader.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "looplab/io/atomic_file.h"
#include "looplab/tasks/registry.h"
#include "looplab/util/error.h"

namespace looplab {

using json = nlohmann::json;
namespace fs = std::filesystem;

std::string RunFolder::file(const std::string& name) const { return path_ + "/" + name; }

bool RunFolder::has(const std::string& name) const {
  std::error_code ec;
  return std::filesystem::is_regular_file(file(name), ec);
}

std::string RunFolder::weights(const std::string& which) const {
  if (which != "best" && which != "final" && which != "latest" && which != "raw")
    throw OptionError("weights", " '" + which + "': expected final, best or raw");
  if (which == "best") return has(kBest) ? kBest : kWeights;
  if (which == "raw") {
    if (!has(kRaw)) throw Error(path_ + ": no " + kRaw + " (only a run trained with --ema keeps the raw weights apart)");
    return kRaw;
  }
  if (!has(kWeights) && has(kBest))
    throw Error(path_ + ": no final weights (" + kWeights + "), only the best epoch's (" + kBest + "): pass --weights best");
  return kWeights;
}

ModelConfig RunFolder::config() const { return config_from_json(read_json_file(file(kConfig)), file(kConfig)); }

RunSpec RunFolder::spec() const {
  RunSpec s;
  s.model = config();
  const std::string path = file(kTraining);
  const json j = read_json_file(path);
  // schema_version: absent in files from before versions (version 1).
  s.schema_version = json_reader::read_typed<int>(j, path, [](const json& j) {
    if (!j.is_object() || !j.contains("train") || !j.contains("data"))
      throw json_reader::KeyError("", "expected the keys 'train' and 'data'");
    return json_reader::read_schema_version(j, kTrainingSchemaVersion);
  });
  s.train = train_options_from_json(j["train"], path);
  s.data = data_options_from_json(j["data"], path);
  s.data.base_dir = path_;
  return s;
}

void RunFolder::write_spec(const RunSpec& spec) const {
  const json j = {{"schema_version", kTrainingSchemaVersion}, {"train", to_json(spec.train)}, {"data", to_json(spec.data)}};
  write_file_atomic(file(kTraining), j.dump(2) + "\n");
}

bool RunFolder::is_eval_file(const std::string& name) {
  if (name == kEval) return true;
  const std::string head = "eval-", tail = ".json";
  if (name.size() <= head.size() + tail.size() || name.compare(0, head.size(), head) != 0 ||
      name.compare(name.size() - tail.size(), tail.size(), tail) != 0)
    return false;
  const std::string middle = name.substr(head.size(), name.size() - head.size() - tail.size());
  return std::all_of(middle.begin(), middle.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

std::vector<std::string> RunFolder::eval_files() const {
  std::vector<std::string> named;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(path_, ec)) {
    const std::string name = e.path().filename().string();
    if (name != kEval && is_eval_file(name) && e.is_regular_file(ec)) named.push_back(name);
  }
  std::sort(named.begin(), named.end());
  if (has(kEval)) named.insert(named.begin(), kEval);
  return named;
}

DataOptions RunFolder::evaluation_data() const {
  if (is_training_run()) return spec().data;
  DataOptions d = task(config().task).default_data();
  d.base_dir = path_;
  return d;
}

int64_t RunFolder::training_iters() const { return is_training_run() ? spec().train.training_iters : 30; }

std::vector<EpochMetrics> RunFolder::metrics() const {
  if (!has(kMetrics)) return {};
  return read_metrics(file(kMetrics));
}

RunSpec create_run_folder(const std::string& dir, RunSpec spec, int threads) {
  spec.data = with_absolute_files(spec.data);
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
  task(spec.data.task).prepare(spec.data, building, threads);
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
}

}  // namespace looplab
