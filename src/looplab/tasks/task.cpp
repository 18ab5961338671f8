#include "looplab/tasks/task.h"

#include "looplab/io/json_reader.h"
#include "looplab/io/option_json.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "looplab/util/error.h"

namespace looplab {

namespace {

int split_index(const std::string& split) {
  if (split == "train") return 0;
  if (split == "val") return 1;
  if (split == "hard") return 2;
  throw Error("unknown split '" + split + "' (expected train, val or hard)");
}

}  // namespace

int64_t DataOptions::count(const std::string& split) const {
  const int i = split_index(split);
  return i == 0 ? train_count : i == 1 ? val_count : hard_count;
}

const std::string& DataOptions::file(const std::string& split) const {
  const int i = split_index(split);
  return i == 0 ? train_file : i == 1 ? val_file : hard_file;
}

void DataOptions::set_count(const std::string& split, int64_t n) {
  const int i = split_index(split);
  (i == 0 ? train_count : i == 1 ? val_count : hard_count) = n;
}

DataOptions with_absolute_files(DataOptions d) {
  for (std::string* f : {&d.train_file, &d.val_file, &d.hard_file, &d.data_file})
    if (!f->empty()) *f = std::filesystem::absolute(*f).string();
  return d;
}

std::string DataOptions::resolve(const std::string& f) const {
  if (f.empty() || base_dir.empty() || std::filesystem::path(f).is_absolute()) return f;
  return (std::filesystem::path(base_dir) / f).string();
}

const OptionTable<DataOptions>& data_option_table() {
  using D = DataOptions;
  static const OptionTable<D> table = {
      option("task", &D::task, "the task (chosen by --task)").file_only(),
      option("train-count", &D::train_count, "training examples", at_least<int64_t>(0)),
      option("val-count", &D::val_count, "val examples", at_least<int64_t>(0)),
      option("hard-count", &D::hard_count, "hard examples", at_least<int64_t>(0)),
      option("train-bits", &D::train_bits, "1-D tasks: train and val length", at_least<int64_t>(1)),
      option("hard-bits", &D::hard_bits, "1-D tasks: hard length", at_least<int64_t>(1)),
      option("train-size", &D::train_size, "mazes: the maze size of train and val (the data set's: 9, 11, ..., 59, 201)",
             at_least<int64_t>(3))
          .added_later(),
      option("hard-size", &D::hard_size, "mazes: the maze size of hard", at_least<int64_t>(3)).added_later(),
      option("border", &D::border,
             "mazes: rings of blocked cells around every maze (each maze cell's window centred, as zero padding)",
             at_least<int64_t>(0))
          .added_later(),
      option("data-seed", &D::seed, "seed of the generated data").in_json_as("seed"),
      option("train-file", &D::train_file, "CSV of training examples (replaces generated ones)").added_later(),
      option("val-file", &D::val_file, "CSV of val examples").added_later(),
      option("hard-file", &D::hard_file, "CSV of hard examples").added_later(),
      option("data-file", &D::data_file,
             "one file of rated examples to split by rating into easy (train, val) and hard (see the task's docs; "
             "a task that needs one and has none makes a pool from --data-seed)")
          .added_later(),
      option("skip-bad", &D::skip_bad, "count and skip bad rows of the data files").added_later(),
  };
  return table;
}

nlohmann::json to_json(const DataOptions& s) { return options_to_json(data_option_table(), s); }

DataOptions data_options_from_json(const nlohmann::json& j, const std::string& source) {
  using namespace json_reader;
  return read_typed<DataOptions>(j, source, [](const nlohmann::json& j) {
    DataOptions s;
    nested("data", [&] { options_from_json(data_option_table(), j, s); });
    return s;
  });
}

void Examples::resize(int64_t n, int64_t p, int64_t c) {
  count = n, positions = p, channels = c;
  inputs.assign(static_cast<size_t>(n * p * c), 0.0f);
  targets.assign(static_cast<size_t>(n * p), 0);
}

DataOptions Task::default_data() const {
  DataOptions d;
  d.task = name();
  return d;
}

Preset Task::preset(const std::string& name) const {
  Preset p;  // the paper's sizes (B.1): width 256, 8 heads, batch 500, 100 epochs
  if (name == "paper") return p;
  if (name == "cpu") {
    // Chosen for 2 cores (docs/presets.md): width 64 with 4 heads, as SPEC's small-scale sketch.
    p.width = 64, p.heads = 4, p.epochs = 60, p.cooldown_epoch = 50;
    return p;
  }
  throw Error("unknown preset '" + name + "' (expected paper or cpu)");
}

void Task::prepare(DataOptions&, const std::string&, int) const {}

Difficulty Task::difficulty_levels(const DataOptions&, int64_t) const { return {}; }

Examples Task::encode_query(const std::string&) const { throw Error(name() + ": no solve query"); }

std::string Task::describe_answer(const std::string&, const std::vector<int64_t>&, const std::vector<float>&,
                                  int64_t) const {
  return "";
}

namespace {

const std::string& value_of(const Values& v, const std::string& name) {
  auto it = v.find(name);
  if (it == v.end()) throw OptionError(name, " is required");
  return it->second;
}

}  // namespace

const std::string& text_value(const Values& v, const std::string& name) {
  const std::string& s = value_of(v, name);
  if (s.empty()) throw OptionError(name, " is empty");
  return s;
}

int64_t int_value(const Values& v, const std::string& name) {
  const std::string& s = value_of(v, name);
  try {
    size_t used = 0;
    const long long x = std::stoll(s, &used);
    if (used == s.size()) return x;
  } catch (const std::logic_error&) {
  }
  throw OptionError(name, " '" + s + "': expected an integer");
}

uint64_t seed_value(const Values& v, const std::string& name) {
  const std::string& s = value_of(v, name);
  try {
    size_t used = 0;
    if (!s.empty() && s[0] != '-') {
      const unsigned long long x = std::stoull(s, &used);
      if (used == s.size()) return x;
    }
  } catch (const std::logic_error&) {
  }
  throw OptionError(name, " '" + s + "': expected a non-negative integer");
}

bool flag_value(const Values& v, const std::string& name) {
  auto it = v.find(name);
  return it != v.end() && it->second == "true";
}

}  // namespace looplab
