// A task of the paper as the rest of looplab sees it: its shape (grid, channels, attention),
// its data (generated or read, with errors naming the file, line and field), its encoding as
// flat arrays that become tensors unchanged, how logits become an answer, its presets, its
// `looplab data` generator, its extra commands and its `looplab solve` printout. Each task
// folder implements one Task; tasks/registry.cpp lists them. No LibTorch here.
//
// Adding a task: docs/architecture.md.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "looplab/util/options.h"

namespace looplab {

// How logits [positions, C_out] become an answer (a class per position). An answer is exact
// when every position equals the target: the rule is the same for every task.
enum class Decoding {
  kArgmax,      // the most likely class at each position
  kTopTwoMove,  // class 1 on the two positions with the largest class-1 logits (a move's
                // from and to squares), 0 elsewhere
};

struct TaskSpec {
  std::string name;            // the registry's key, also the `--task` value
  // Training grid; its rank is the number of RoPE axes. A 1-D task takes inputs of any length
  // (tested on longer ones); other grids are fixed.
  std::vector<int64_t> grid;
  int64_t in_channels;
  int64_t out_channels;
  bool neighbourhood_attention;        // neighbourhood attention, or full attention
  Decoding decoding;
  // How a model folder of config.json version 1 (looplab before 2026-12-03) loads now that the
  // inputs follow the released code: unchanged; shifted by -0.5 (bit - 0.5), which folds into the
  // projection's bias; or moved (another grid layout), which cannot be carried over.
  enum class Version1Inputs { kSame, kShiftedByHalf, kMoved } version1_inputs = Version1Inputs::kSame;
  // The keys of the paper's tables of this task in tables.json (val, hard).
  std::string paper_val_table = "table4_val", paper_hard_table = "table5_hard";
  // The neighbourhood's keys per axis (ModelConfig::window's default for the task).
  int64_t window = 5;
  // A 2-D grid that takes any square side, like a 1-D task any length (mazes: trained on 5 x 5
  // cells, tested on 30 x 30); otherwise a grid of rank 2 or more is fixed.
  bool any_square_side = false;
};

// What data a run trains and is evaluated on (training.json's "data"). Counts and files are
// per split; the meaning of the rest is the task's.
struct DataOptions {
  std::string task;
  int64_t train_count = 8000, val_count = 2000, hard_count = 10000;
  int64_t train_bits = 32, hard_bits = 512;  // 1-D tasks: train and val length, hard length
  int64_t train_size = 9, hard_size = 59;     // mazes: the maze size (the data set's name) of train and val, of hard
  // mazes: rings of blocked cells (no passages, never on the path) around every maze, so that
  // each maze cell's window is centred on it as a convolution's zero padding centres its kernel
  // (0: none; a window clamped at the grid's edge sees other neighbours at the edge than inside).
  int64_t border = 0;
  uint64_t seed = 0;                          // each split draws from its own stream of this seed
  std::string train_file, val_file, hard_file;  // a file per split replaces its generated examples
  // One file of rated examples to be split by rating into easy (train, val) and hard.
  std::string data_file;
  bool skip_bad = false;  // count and skip bad rows of the files instead of stopping
  // Not saved: relative file names are resolved against it (a run folder's files travel with it).
  std::string base_dir;

  // split: "train", "val" or "hard"; throws looplab::Error for any other name.
  int64_t count(const std::string& split) const;
  const std::string& file(const std::string& split) const;
  void set_count(const std::string& split, int64_t count);
  // A file name as given, or resolved against base_dir when relative.
  std::string resolve(const std::string& file) const;
};
// The same options with every relative file name made absolute against the working folder
// (what training.json records for files named on a command line or in a sweep file).
DataOptions with_absolute_files(DataOptions d);
// DataOptions's table (util/options.h): the flags and sweep keys of `looplab train`, training.json's
// "data" object (the seed's key there is "seed") and the checks.
const OptionTable<DataOptions>& data_option_table();
nlohmann::json to_json(const DataOptions& d);
DataOptions data_options_from_json(const nlohmann::json& j, const std::string& source);

// Examples as the model sees them: flat row-major arrays.
struct Examples {
  int64_t count = 0, positions = 0, channels = 0;
  std::vector<float> inputs;     // [count, positions, channels]
  std::vector<int64_t> targets;  // [count, positions]: the class of each position
  // Room for `n` examples of `positions` x `channels`, inputs zeroed.
  void resize(int64_t n, int64_t positions, int64_t channels);
  float* input(int64_t i) { return inputs.data() + i * positions * channels; }
  int64_t* target(int64_t i) { return targets.data() + i * positions; }
};

// What a preset sets per task (docs/presets.md); run/run_spec.h turns it into a run's settings.
struct Preset {
  int64_t width = 256, heads = 8;
  int64_t train_count = 0, val_count = 0, hard_count = 0;  // 0: the task's default_data()
  int64_t batch = 500, epochs = 100, cooldown_epoch = 60;
  double lr = 1e-3;
};

// A command a task adds to `looplab` (its data generator, its tools), described as data so
// that the command line builds it without knowing the task. Values arrive as text; the task
// parses them and throws OptionError (util/error.h) naming the parameter.
struct Parameter {
  std::string name;          // "count" -> --count; positional: the name shown in the usage
  std::string help;
  std::string default_value;  // "" with required = false: optional, absent; an integer: takes integers
  enum Kind { kValue, kFlag, kPositional } kind = kValue;
  bool required = false;
};
using Values = std::map<std::string, std::string>;  // every parameter's value ("true"/"false" for flags)
struct Tool {
  std::string name, help;
  std::vector<Parameter> parameters;
  // `threads`: the threads the user gave (or every core); the output goes to stdout.
  std::function<void(const Values&, int threads)> run;
};

// The text of `looplab solve DIR --OPTION TEXT` for one query.
struct SolveOption {
  std::string name;  // e.g. "puzzle" -> --puzzle; empty: the task has no solve query
  std::string help;
};

// `looplab demo`: models shipped under models/ compared on val and hard, then a short live run.
struct Demo {
  std::string title;  // first lines printed
  struct Contender {
    std::string label, folder;  // folder: under the demo's models folder
  };
  std::vector<Contender> contenders;  // two
  std::string val_label, hard_label;  // table columns, e.g. "val 32-bit"
  std::string unit;                   // what a position is, e.g. "bits"
  std::string conclusion;             // printed after the table
  std::string live_title;             // printed before the live run
  // The live run: the cpu preset with these changes, chosen so that a model learns within
  // about 2 minutes on 2 cores (docs/presets.md, "The demo's live run").
  std::string live_recall = "external", live_norm = "post";
  int64_t live_train_count = 2000, live_val_count = 200;
  int64_t live_batch = 100, live_epochs = 24, live_cooldown_epoch = 17;
  // 5e-4 since the released recipe (2026-12-03): its warm-up reaches the full rate at epoch 9,
  // where 1e-3 collapsed the run to chance (0.0% val from epoch 11 on, docs/presets.md).
  double live_lr = 5e-4;
  // The paper's own configuration trained here, one folder per seed (under the demo's models
  // folder; none: not shown), shown after the contrast: each seed's final weights at the last
  // iteration on a few examples, beside the folder's full evaluation (eval-val.json and
  // eval-hard.json, scripts/paper-prefix-sums) and the paper's values. Width 256 costs about 16x
  // the contenders' per iteration: the counts keep it near a minute on 2 cores.
  std::string paper_config{};                 // what the seeds are, printed first
  std::vector<std::string> paper_seeds{};     // their folders
  double paper_val = 0, paper_hard = 0;       // the paper's values for it (%)
  std::string paper_text{};                   // printed after the table
  int64_t paper_val_count = 0, paper_hard_count = 0;
};

// A difficulty level of a task (`looplab eval --scaling`): its examples and what sets them apart.
struct Level {
  std::string label;        // e.g. "256 bits", "rating 1601-2000"
  int64_t size = 0;         // positions per input
  double difficulty = 0;    // in the levels' measure: the bits, or the median rating of the level's examples
  Examples examples;
};
// A task's difficulty levels, easiest first, and what their `difficulty` measures ("bits",
// "rating (solver backtracks)", "puzzle rating").
struct Difficulty {
  std::string measure;
  std::vector<Level> levels;
};

class Task {
 public:
  virtual ~Task() = default;
  virtual const TaskSpec& spec() const = 0;
  const std::string& name() const { return spec().name; }

  // SPEC section 3's sizes of the splits.
  virtual DataOptions default_data() const;
  // "paper" (the paper's sizes) or "cpu" (for 2 cores); throws looplab::Error otherwise.
  virtual Preset preset(const std::string& name) const;

  // The examples of a split ("train", "val", "hard"), generated or read. Bad files are a
  // looplab::Error naming the file, line and field.
  virtual Examples load(const DataOptions& data, const std::string& split) const = 0;
  // Before training, in the new run folder `dir`: makes what load() needs and points `data`
  // at it (a task that splits one generated pool makes the pool). Default: nothing.
  virtual void prepare(DataOptions& data, const std::string& dir, int threads) const;
  // `count` random examples of `positions` positions for benchmarks: inputs of the task's
  // form; targets need not be right.
  virtual Examples synthetic(int64_t count, int64_t positions, uint64_t seed) const = 0;

  // `looplab eval --scaling`: `count` examples per difficulty level (fewer where the data has
  // fewer), easiest first, from the run's data options, none of them a train or val example.
  // Default: none (eval --scaling says the task has none yet).
  virtual Difficulty difficulty_levels(const DataOptions& data, int64_t count) const;
  // `looplab data NAME`: writes generated examples to a file.
  virtual Tool generator() const = 0;
  // `looplab NAME TOOL`: commands of the task's own (none by default).
  virtual std::vector<Tool> tools() const { return {}; }
  // `looplab bench NAME`: benchmarks of the task's own code (no model), e.g. sudoku's generator.
  virtual std::vector<Tool> benchmarks() const { return {}; }
  virtual std::string tools_help() const { return ""; }

  // `looplab solve`: the option naming a query, its encoding as one example, and the printout
  // of the model's answer: `answer` the decoded class per position after `iterations`,
  // `logits` [positions * out_channels] after the last iteration, `unchanged_from` the first
  // iteration from which the answer no longer changed.
  virtual SolveOption solve_option() const { return {}; }
  // The task's demo, when it has one (the first task with one is `looplab demo`'s).
  virtual const Demo* demo() const { return nullptr; }
  virtual Examples encode_query(const std::string& text) const;
  virtual std::string describe_answer(const std::string& text, const std::vector<int64_t>& answer,
                                      const std::vector<float>& logits, int64_t iterations) const;
};

// Parameter parsing for tools: throws OptionError naming the parameter (missing, or not of the
// kind asked for).
const std::string& text_value(const Values& v, const std::string& name);
int64_t int_value(const Values& v, const std::string& name);
uint64_t seed_value(const Values& v, const std::string& name);
bool flag_value(const Values& v, const std::string& name);

}  // namespace looplab
