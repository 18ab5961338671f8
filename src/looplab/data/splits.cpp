#include "looplab/data/splits.h"

#include <nlohmann/json.hpp>

#include "looplab/tasks/prefix_sums/prefix_sums.h"
#include "looplab/util/error.h"

namespace looplab {

namespace {

Split prefix_sums_tensors(const std::string& name, const prefix_sums::Dataset& d) {
  const int64_t n = static_cast<int64_t>(d.size()), bits = d.bits;
  Split s;
  s.name = name;
  s.inputs = torch::empty({n, bits, 1}, torch::kFloat32);
  s.targets = torch::empty({n, bits}, torch::kInt64);
  auto in = s.inputs.accessor<float, 3>();
  auto tg = s.targets.accessor<int64_t, 2>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < bits; ++j) {
      in[i][j][0] = d.inputs[i][j];
      tg[i][j] = d.targets[i][j];
    }
  return s;
}

}  // namespace

Split load_split(const DataSettings& s, const std::string& split) {
  int index;
  std::string file;
  int64_t count, bits;
  if (split == "train") {
    index = 0, file = s.train_file, count = s.train_count, bits = s.train_bits;
  } else if (split == "val") {
    index = 1, file = s.val_file, count = s.val_count, bits = s.train_bits;
  } else if (split == "hard") {
    index = 2, file = s.hard_file, count = s.hard_count, bits = s.hard_bits;
  } else {
    throw Error("unknown split '" + split + "' (expected train, val or hard)");
  }
  if (s.task != "prefix-sums")
    throw Error("task '" + s.task + "' has no data source yet (prefix-sums only for now)");
  // Three independent streams of one seed: the splits never share a random sequence.
  const uint64_t seed = s.seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(index) + 1;
  return prefix_sums_tensors(split, file.empty() ? prefix_sums::generate(bits, count, seed) : prefix_sums::read_csv(file));
}

nlohmann::json to_json(const DataSettings& s) {
  return {{"task", s.task},           {"train_count", s.train_count}, {"val_count", s.val_count},
          {"hard_count", s.hard_count}, {"train_bits", s.train_bits},   {"hard_bits", s.hard_bits},
          {"seed", s.seed},           {"train_file", s.train_file},   {"val_file", s.val_file},
          {"hard_file", s.hard_file}};
}

DataSettings data_settings_from_json(const nlohmann::json& j, const std::string& source) {
  DataSettings s;
  try {
    s.task = j.at("task").get<std::string>();
    s.train_count = j.at("train_count").get<int64_t>();
    s.val_count = j.at("val_count").get<int64_t>();
    s.hard_count = j.at("hard_count").get<int64_t>();
    s.train_bits = j.at("train_bits").get<int64_t>();
    s.hard_bits = j.at("hard_bits").get<int64_t>();
    s.seed = j.at("seed").get<uint64_t>();
    s.train_file = j.value("train_file", "");
    s.val_file = j.value("val_file", "");
    s.hard_file = j.value("hard_file", "");
  } catch (const nlohmann::json::exception& e) {
    throw Error(source + ": data settings: " + e.what());
  }
  return s;
}

}  // namespace looplab
