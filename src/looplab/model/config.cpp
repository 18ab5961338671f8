#include "looplab/model/config.h"

#include <cmath>

#include "looplab/io/json_reader.h"

#include <nlohmann/json.hpp>

#include "looplab/tasks/registry.h"
#include "looplab/util/error.h"

namespace looplab {

using json = nlohmann::json;

namespace {

template <typename E>
struct Names {
  E value;
  const char* name;
};

const Names<Recall> kRecalls[] = {{Recall::kNone, "none"},
                                  {Recall::kExternal, "external"},
                                  {Recall::kInternal, "internal"},
                                  {Recall::kFixed, "fixed"}};
const Names<Norm> kNorms[] = {{Norm::kPre, "pre"}, {Norm::kPeri, "peri"}, {Norm::kPost, "post"}, {Norm::kGru, "gru"}};

template <typename E, size_t N>
E parse_name(const Names<E> (&table)[N], const std::string& s, const char* what) {
  std::string valid;
  for (const auto& n : table) {
    if (s == n.name) return n.value;
    valid += (valid.empty() ? "" : ", ") + std::string(n.name);
  }
  throw Error(std::string("unknown ") + what + " '" + s + "' (expected one of: " + valid + ")");
}

template <typename E, size_t N>
std::string name_of(const Names<E> (&table)[N], E v) {
  for (const auto& n : table)
    if (n.value == v) return n.name;
  return "?";
}

template <typename E, size_t N>
std::vector<std::string> names_of(const Names<E> (&table)[N]) {
  std::vector<std::string> out;
  for (const auto& n : table) out.push_back(n.name);
  return out;
}

}  // namespace

const std::vector<std::string>& recall_names() {
  static const std::vector<std::string> names = names_of(kRecalls);
  return names;
}
const std::vector<std::string>& norm_names() {
  static const std::vector<std::string> names = names_of(kNorms);
  return names;
}

std::string to_string(Recall r) { return name_of(kRecalls, r); }
std::string to_string(Norm n) { return name_of(kNorms, n); }
Recall parse_recall(const std::string& s) { return parse_name(kRecalls, s, "recall"); }
Norm parse_norm(const std::string& s) { return parse_name(kNorms, s, "normalization"); }
bool has_outer_normalization(Norm n) { return n == Norm::kPost || n == Norm::kGru; }

ModelConfig default_config(const std::string& task_name, Recall recall, Norm norm, int64_t width) {
  const TaskSpec& spec = task(task_name).spec();
  ModelConfig c;
  c.task = spec.name;
  c.recall = recall;
  c.norm = norm;
  c.width = width;
  c.blocks = recall == Recall::kFixed ? 15 : 1;
  c.in_channels = spec.in_channels;
  c.out_channels = spec.out_channels;
  c.grid = spec.grid;
  c.neighbourhood_attention = spec.neighbourhood_attention;
  c.window = spec.window;
  return c;
}

std::vector<int64_t> grid_for(const ModelConfig& c, int64_t positions) {
  if (c.grid.size() == 1) return {positions};
  int64_t total = 1;
  for (int64_t g : c.grid) total *= g;
  if (positions == total) return c.grid;
  std::string shape;
  for (int64_t g : c.grid) shape += (shape.empty() ? "" : "x") + std::to_string(g);
  if (c.grid.size() == 2 && task(c.task).spec().any_square_side) {
    const auto side = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(positions))));
    if (side > 0 && side * side == positions) return {side, side};
    throw Error("input has " + std::to_string(positions) + " positions; a " + c.task +
                " model takes a square grid in row-major order (trained on " + shape + "), and " +
                std::to_string(positions) + " is not a square");
  }
  throw Error("input has " + std::to_string(positions) + " positions; a " + c.task + " model expects " +
              std::to_string(total) + " (a " + shape + " grid in row-major order)");
}

void validate(const ModelConfig& c) {
  auto need = [](bool ok, const std::string& why) {
    if (!ok) throw Error("invalid model configuration: " + why);
  };
  need(c.width > 0, "width must be positive");
  need(c.heads > 0 && c.width % c.heads == 0, "width " + std::to_string(c.width) + " is not divisible by heads " +
                                                  std::to_string(c.heads));
  need(c.mlp_ratio > 0, "mlp_ratio must be positive");
  need(c.blocks > 0, "blocks must be positive");
  need(c.in_channels > 0 && c.out_channels > 0, "in_channels and out_channels must be positive");
  need(!c.grid.empty() && c.grid.size() <= 3, "grid must have 1 to 3 axes");
  for (int64_t g : c.grid) need(g > 0, "grid sizes must be positive");
  need(c.head_dim() % (2 * c.spatial_dims()) == 0,
       "head_dim " + std::to_string(c.head_dim()) + " must be divisible by 2 x " + std::to_string(c.spatial_dims()) +
           " grid axes for N-D RoPE");
  need(!c.neighbourhood_attention || (c.window > 0 && c.window % 2 == 1), "window must be a positive odd number");
  need(c.rope_base > 1.0, "rope_base must exceed 1");
}

int64_t parameter_count(const ModelConfig& c) {
  const int64_t d = c.width, hidden = c.mlp_ratio * d;
  const int64_t attention = (d * 3 * d + 3 * d) + (d * d + d) + 2 * c.head_dim();  // qkv, out, QK-norm
  const int64_t mlp = (d * hidden + hidden) + (hidden * d + d);
  int64_t norms = 0;
  switch (c.norm) {
    case Norm::kPre: norms = 1; break;
    case Norm::kPeri: norms = 2; break;
    case Norm::kPost: norms = 1; break;
    case Norm::kGru: norms = 2; break;
  }
  const bool recall = c.recall == Recall::kExternal || c.recall == Recall::kInternal;
  const int64_t block = attention + mlp + norms * d + (recall ? 2 * (d * d + d) : 0) +
                        (c.norm == Norm::kGru ? 2 * (3 * d * d) + 2 * 3 * d : 0);
  const int64_t head = d + (d * d + d) + (d * c.out_channels + c.out_channels);
  const int64_t projection = d * c.in_channels + d;
  const int64_t halt = c.halt_head ? d + 1 : 0;
  return c.blocks * block + head + projection + halt;
}

json to_json(const ModelConfig& c) {
  json j{{"format", "looplab-model"},
              {"schema_version", kModelVersion},
              {"task", c.task},
              {"recall", to_string(c.recall)},
              {"norm", to_string(c.norm)},
              {"width", c.width},
              {"heads", c.heads},
              {"mlp_ratio", c.mlp_ratio},
              {"blocks", c.blocks},
              {"in_channels", c.in_channels},
              {"out_channels", c.out_channels},
              {"grid", c.grid},
              {"attention", c.neighbourhood_attention ? "neighbourhood" : "full"},
              {"window", c.window},
              {"rope_base", c.rope_base}};
  if (c.halt_head) j["halt_head"] = true;
  return j;
}

ModelConfig model_config(const ModelShape& s) {
  const std::string task_name = s.task.empty() ? all_tasks().front()->name() : s.task;
  ModelConfig c = default_config(task_name, parse_recall(s.recall), parse_norm(s.norm), s.width);
  c.heads = s.heads;
  c.mlp_ratio = s.mlp_ratio;
  if (s.blocks != 0) c.blocks = s.blocks;
  if (s.window != 0) c.window = s.window;
  validate(c);
  return c;
}

int64_t model_version(const json& j, const std::string& source) {
  if (!j.is_object()) return 1;
  return json_reader::read_typed<int64_t>(
      j, source, [](const json& v) { return json_reader::read_schema_version(v, kModelVersion, "version"); });
}

ModelConfig config_from_json(const json& j, const std::string& source) {
  using namespace json_reader;
  ModelConfig c = read_typed<ModelConfig>(j, source, [](const json& j) {
    need_object(j);
    std::string format = "looplab-model", recall, norm, attention;
    get_optional(j, "format", format);
    if (format != "looplab-model") throw KeyError("format", "expected \"looplab-model\"");
    read_schema_version(j, kModelVersion, "version");
    ModelConfig c;
    get(j, "task", c.task);
    get(j, "recall", recall);
    nested("recall", [&] { c.recall = parse_recall(recall); });
    get(j, "norm", norm);
    nested("norm", [&] { c.norm = parse_norm(norm); });
    get(j, "width", c.width);
    get(j, "heads", c.heads);
    get(j, "mlp_ratio", c.mlp_ratio);
    get(j, "blocks", c.blocks);
    get(j, "in_channels", c.in_channels);
    get(j, "out_channels", c.out_channels);
    get(j, "grid", c.grid);
    // "local": versions 1-2's name for neighbourhood attention.
    get(j, "attention", attention);
    if (attention != "neighbourhood" && attention != "local" && attention != "full")
      throw KeyError("attention", "expected \"neighbourhood\" or \"full\"");
    c.neighbourhood_attention = attention != "full";
    get(j, "window", c.window);
    get_optional(j, "rope_base", c.rope_base);
    get_optional(j, "halt_head", c.halt_head);
    return c;
  });
  try {
    validate(c);
  } catch (const Error& e) {
    throw Error(source + ": " + e.what());
  }
  return c;
}

std::string describe(const ModelConfig& c) {
  std::string grid;
  for (size_t i = 0; i < c.grid.size(); ++i) grid += (i ? "x" : "") + std::to_string(c.grid[i]);
  const bool any_side = c.grid.size() == 2 && task(c.task).spec().any_square_side;
  return "task        " + c.task + " (grid " + grid + (c.grid.size() == 1 ? ", any length" : any_side ? ", any square side" : "") +
         ", " +
         std::to_string(c.in_channels) + " in / " + std::to_string(c.out_channels) + " out channels)\n" +
         "recall      " + to_string(c.recall) + "\n" + "norm        " + to_string(c.norm) +
         (has_outer_normalization(c.norm) ? " (outer normalization)" : " (no outer normalization)") + "\n" +
         "width       " + std::to_string(c.width) + ", " + std::to_string(c.heads) + " heads of " +
         std::to_string(c.head_dim()) + ", MLP hidden " + std::to_string(c.mlp_ratio * c.width) + ", " +
         std::to_string(c.blocks) + " block(s) per iteration\n" + "attention   " +
         (c.neighbourhood_attention ? "neighbourhood, window " + std::to_string(c.window) : std::string("full")) + ", " +
         std::to_string(c.spatial_dims()) + "-D RoPE, QK-norm\n";
}

}  // namespace looplab
