#include "looplab/serve/api.h"

#include "looplab/io/atomic_file.h"
#include "looplab/io/json_file.h"
#include "looplab/model/config.h"
#include "looplab/run/reports.h"
#include "looplab/run/run_folder.h"
#include "looplab/sweep/report.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>
#include <tuple>

#include "looplab/analysis/geometry.h"
#include "looplab/explore/explore.h"
#include "looplab/util/list.h"

namespace looplab::serve {

namespace fs = std::filesystem;
namespace ag = looplab::geometry;
using nlohmann::json;

namespace {

// Refuses a parameter that is not in `allowed` or comes twice; names the allowed ones.
void check_names(const std::string& what, const Query& query, const std::vector<std::string>& allowed) {
  std::set<std::string> seen;
  for (const auto& [key, value] : query) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string names;
      for (const auto& a : allowed) names += (names.empty() ? "" : ", ") + a;
      throw ApiError(400, what + ": unknown parameter '" + key + "' (one of: " + names + ")");
    }
    if (!seen.insert(key).second) throw ApiError(400, what + ": parameter '" + key + "' given twice");
  }
}

const std::string* find(const Query& query, const std::string& key) {
  const auto it = query.find(key);
  return it == query.end() ? nullptr : &it->second;
}

double parse_double(const std::string& what, const std::string& key, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v))
    throw ApiError(400, what + ": " + key + " = '" + text + "' is not a finite number");
  return v;
}

double number(const std::string& what, const Query& query, const std::string& key, double fallback, double lo,
              double hi) {
  const std::string* text = find(query, key);
  if (!text) return fallback;
  const double v = parse_double(what, key, *text);
  if (v < lo || v > hi) {
    std::ostringstream s;
    s << what << ": " << key << " = " << *text << " is out of range [" << lo << ", " << hi << "]";
    throw ApiError(400, s.str());
  }
  return v;
}

int64_t integer(const std::string& what, const Query& query, const std::string& key, int64_t fallback, int64_t lo,
                int64_t hi) {
  const std::string* text = find(query, key);
  if (!text) return fallback;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text->c_str(), &end, 10);
  if (text->empty() || end != text->c_str() + text->size() || errno == ERANGE)
    throw ApiError(400, what + ": " + key + " = '" + *text + "' is not an integer");
  if (v < lo || v > hi)
    throw ApiError(400, what + ": " + key + " = " + *text + " is out of range [" + std::to_string(lo) + ", " +
                            std::to_string(hi) + "]");
  return v;
}

// The engines throw looplab::Error for input they refuse: that is the client's fault (400).
template <class F>
json engine(F&& f) {
  try {
    return f();
  } catch (const ApiError&) {
    throw;
  } catch (const Error& e) {
    throw ApiError(400, e.what());
  }
}

bool is_inside(const fs::path& root, const fs::path& p) {
  auto r = root.begin(), q = p.begin();
  for (; r != root.end(); ++r, ++q)
    if (q == p.end() || *r != *q) return false;
  return q != p.end();  // strictly below the root
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw Error(p.string() + ": cannot be read");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A report read through its library type (run/reports.h): files of older schema versions come
// back upgraded, with schema_version. A file that parses as JSON but does not match its type is
// served as written, with the mismatch under errors[file].
json typed(const std::string& file, const json& raw, json& errors) {
  try {
    if (RunFolder::is_eval_file(file)) return json(raw.get<EvalReport>());
    if (file == RunFolder::kAnalysis) return json(raw.get<AnalysisReport>());
    if (file == RunFolder::kEvalTrace) return json(raw.get<TraceReport>());
    if (file == RunFolder::kMetrics) {
      json rows = json::array();
      for (const json& row : raw) rows.push_back(json(row.get<EpochMetrics>()));
      return rows;
    }
  } catch (const json::exception& e) {
    errors[file] = std::string("not a looplab ") + file + " (" + e.what() + "); shown as written";
  }
  return raw;
}

// Reads FILE of a run as JSON (or JSON lines) into out[key]; null when absent; a parse error
// goes under errors[file].
void read_json(const fs::path& dir, const std::string& file, const std::string& key, bool lines, json& out,
               json& errors) {
  out[key] = nullptr;
  const fs::path p = dir / file;
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return;
  try {
    const std::string text = read_text(p);
    if (!lines) {
      out[key] = typed(file, json::parse(text), errors);
      return;
    }
    json rows = json::array();
    std::istringstream in(text);
    std::string line;
    for (int64_t n = 1; std::getline(in, line); ++n) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      try {
        rows.push_back(json::parse(line));
      } catch (const json::exception& e) {
        errors[file] = "line " + std::to_string(n) + ": " + e.what();
        break;
      }
    }
    out[key] = errors.contains(file) ? std::move(rows) : typed(file, rows, errors);
  } catch (const std::exception& e) {
    errors[file] = e.what();
  }
}

}  // namespace

json explore_list() {
  json all = json::array();
  for (const auto& ill : explore::registry()) {
    const json j = ill.compute({});
    all.push_back({{"name", ill.name}, {"number", j.value("number", 0)}, {"title", ill.title},
                   {"parameters", j["parameters"]}});
  }
  return all;
}

json explore_one(const std::string& name, const Query& query) {
  const auto& reg = explore::registry();
  if (std::none_of(reg.begin(), reg.end(), [&](const explore::Illustration& i) { return i.name == name; })) {
    std::string names;
    for (const auto& ill : reg) names += (names.empty() ? "" : ", ") + ill.name;
    throw ApiError(404, "explore: unknown illustration '" + name + "' (one of: " + names + ")");
  }
  explore::Settings settings;
  for (const auto& [key, value] : query)
    if (!settings.emplace(key, value).second) throw ApiError(400, "explore: parameter " + key + " given twice");
  return engine([&] { return explore::run(name, settings); });
}

json regions(const Query& q) {
  const std::string w = "regions";
  check_names(w, q, {"xmin", "xmax", "ymin", "ymax", "n"});
  const double big = 1e6;
  ag::RegionOptions o;
  o.xmin = number(w, q, "xmin", o.xmin, -big, big), o.xmax = number(w, q, "xmax", o.xmax, -big, big);
  o.ymin = number(w, q, "ymin", o.ymin, -big, big), o.ymax = number(w, q, "ymax", o.ymax, -big, big);
  o.n = integer(w, q, "n", o.n, 1, 801);
  return engine([&] { return ag::to_json(ag::region_grid(o)); });
}

json anisotropy(const Query& q) {
  const std::string w = "anisotropy";
  check_names(w, q, {"n", "sigma", "seed"});
  ag::AnisotropyOptions o;
  o.n = integer(w, q, "n", o.n, 2, 100000);
  o.seed = static_cast<uint64_t>(integer(w, q, "seed", static_cast<int64_t>(o.seed), 0, INT64_MAX));
  const std::string* text = find(q, "sigma");
  if (!text) return engine([&] { return ag::to_json(ag::anisotropy(o)); });
  try {
    o.sigmas = parse_positive_numbers(*text, w + ": sigma");
  } catch (const Error& e) {
    throw ApiError(400, e.what());
  }
  if (o.sigmas.size() > 8) throw ApiError(400, w + ": at most 8 sigmas");
  for (double s : o.sigmas)
    if (s > 1e6) throw ApiError(400, w + ": sigma = " + std::to_string(s) + " must be at most 1e6");
  return engine([&] { return ag::to_json(ag::anisotropy(o)); });
}

json phase(const Query& q) {
  const std::string w = "phase";
  check_names(w, q, {"lx", "ly", "steps", "starts", "radius"});
  if (!find(q, "lx") || !find(q, "ly")) throw ApiError(400, w + ": lx and ly are required");
  ag::PhaseOptions o;
  o.lx = number(w, q, "lx", o.lx, -100, 100), o.ly = number(w, q, "ly", o.ly, -100, 100);
  o.steps = integer(w, q, "steps", o.steps, 1, 10000);
  o.starts = integer(w, q, "starts", o.starts, 1, 360);
  o.radius = number(w, q, "radius", o.radius, 1e-6, 1e6);
  return engine([&] { return ag::to_json(ag::phase_portrait(o)); });
}

// ---- runs ------------------------------------------------------------------------------------

Runs::Runs(std::string root, std::string paper_tables) : root_(std::move(root)) {
  std::error_code ec;
  if (!paper_tables.empty() && fs::is_regular_file(paper_tables, ec)) paper_tables_ = read_json_file(paper_tables);
}

const std::vector<std::string>& Runs::run_files() {
  static const std::vector<std::string> files = {RunFolder::kConfig,   RunFolder::kTraining, RunFolder::kMetrics,
                                                 RunFolder::kAnalysis, RunFolder::kTrainLog, RunFolder::kEvalHalt,
                                                 RunFolder::kEvalScaling, RunFolder::kEvalTrace};
  return files;
}

namespace {

// The canonical folder NAME directly inside `root` ("runs" or "sweeps" in messages); throws
// ApiError 400 for a name that is not one path piece, 403 for one leading outside, 404 for none.
std::string child_dir(const std::string& root_name, const std::string& name, const std::string& what) {
  if (name.empty() || name == "." || name == ".." || name.find_first_of("/\\") != std::string::npos ||
      name.find('\0') != std::string::npos)
    throw ApiError(400, what + "s: '" + name + "' is not a " + what + " name (a folder directly inside the " + what +
                            "s folder)");
  std::error_code ec;
  const fs::path root = fs::canonical(root_name, ec);
  if (ec) throw ApiError(404, what + "s: the " + what + "s folder '" + root_name + "' does not exist");
  const fs::path p = root / name;
  if (!fs::exists(p, ec)) throw ApiError(404, what + "s: no " + what + " '" + name + "' in " + root_name);
  const fs::path c = fs::canonical(p, ec);
  if (ec || !is_inside(root, c)) throw ApiError(403, what + "s: '" + name + "' leads outside the " + what + "s folder");
  if (!fs::is_directory(c, ec)) throw ApiError(404, what + "s: '" + name + "' is not a " + what + " folder");
  return c.string();
}

}  // namespace

std::string Runs::run_folder(const std::string& name) const { return child_dir(root_, name, "run"); }

Sweeps::Sweeps(std::string root) : root_(std::move(root)) {}

json Sweeps::list() const {
  json sweeps = json::array();
  std::error_code ec;
  const fs::path root = fs::canonical(root_, ec);
  if (!ec) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(root, ec))
      if (fs::is_regular_file(e.path() / sweep::kReportFile, ec)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    for (const std::string& n : names) {
      json entry = {{"name", n}};
      try {
        const json r = report(n);
        int64_t done = 0, planned = 0;
        for (const auto& g : r.at("groups")) {
          done += static_cast<int64_t>(g.at("runs").size());
          planned += g.at("runs_planned").get<int64_t>();
        }
        entry.update({{"file", r.value("file", "")}, {"eval_iters", r.value("eval_iters", 0)},
                      {"groups", r.at("groups").size()}, {"runs_done", done}, {"runs_planned", planned}});
      } catch (const std::exception& e) {
        entry["error"] = e.what();  // listed, with why it cannot be shown
      }
      sweeps.push_back(entry);
    }
  }
  return {{"root", root_}, {"sweeps", sweeps}};
}

json Sweeps::report(const std::string& name) const {
  const fs::path file = fs::path(child_dir(root_, name, "sweep")) / sweep::kReportFile;
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) throw ApiError(404, "sweeps: '" + name + "' has no report.json (run looplab sweep report)");
  const fs::path c = fs::canonical(file, ec);
  if (ec || !is_inside(fs::canonical(root_, ec), c)) throw ApiError(403, "sweeps: '" + name + "/report.json' leads outside the sweeps folder");
  try {
    return sweep::read_report_json(c.string(), name + "/" + sweep::kReportFile);
  } catch (const Error& e) {
    throw ApiError(400, std::string("sweeps: ") + e.what());
  }
}

namespace {

// The files of a run that the API serves: its evaluations (eval.json first), then the others.
std::vector<std::string> present_files(const fs::path& dir) {
  std::vector<std::string> out = RunFolder(dir.string()).eval_files();
  std::error_code ec;
  for (const auto& f : Runs::run_files())
    if (fs::is_regular_file(dir / f, ec)) out.push_back(f);
  return out;
}

// The figure a runs table shows for one split: the evaluation at its last iteration. Of two,
// the final weights' one wins, then the one of more examples, then the later iteration.
bool better_result(const json& a, const json& b) {
  const bool fa = a["weights"] == RunFolder::kWeights, fb = b["weights"] == RunFolder::kWeights;
  if (fa != fb) return fa;
  if (a["count"] != b["count"]) return a["count"].get<int64_t>() > b["count"].get<int64_t>();
  return a["iteration"].get<int64_t>() > b["iteration"].get<int64_t>();
}

}  // namespace

json Runs::summary(const std::string& name, const std::string& dir_text, bool full) const {
  const fs::path dir(dir_text);
  const RunFolder folder(dir_text);
  std::error_code ec;
  const fs::path root = fs::canonical(root_, ec);
  json j = {{"name", name}, {"files", present_files(dir)}}, errors = json::object();
  // A file is read only when it is one and lies inside the runs folder.
  auto readable = [&](const std::string& file) {
    std::error_code e;
    if (!fs::is_regular_file(dir / file, e)) return false;
    const fs::path c = fs::canonical(dir / file, e);
    if (e || !is_inside(root, c)) {
      errors[file] = "leads outside the runs folder; not read";
      return false;
    }
    return true;
  };

  // The settings, as the library reads them: current keys and values whatever the schema version.
  json settings = nullptr, versions = json::object();
  if (readable(RunFolder::kConfig)) {
    try {
      const json raw = read_json_file(folder.file(RunFolder::kConfig));
      versions[RunFolder::kConfig] = model_version(raw, RunFolder::kConfig);
      json model = to_json(config_from_json(raw, RunFolder::kConfig));
      model.erase("format");          // the file's, not a setting
      model.erase("schema_version");  // under schema_versions
      model["halt_head"] = model.value("halt_head", false);  // written only when true
      settings = {{"model", model}, {"train", nullptr}, {"data", nullptr}};
    } catch (const std::exception& e) {
      errors[RunFolder::kConfig] = e.what();
    }
  }
  if (settings.is_object() && readable(RunFolder::kTraining)) {
    try {
      const RunSpec spec = folder.spec();
      versions[RunFolder::kTraining] = spec.schema_version;
      settings["train"] = to_json(spec.train);
      settings["data"] = to_json(spec.data);
    } catch (const std::exception& e) {
      errors[RunFolder::kTraining] = e.what();
    }
  }
  j["schema_versions"] = versions;
  j["settings"] = settings;

  // Training: the final epoch's val exact accuracy (the final weights', as the paper reports),
  // and the best epoch's beside it.
  json m = json::object();
  if (readable(RunFolder::kMetrics)) read_json(dir, RunFolder::kMetrics, "metrics", true, m, errors);
  const json metrics = m.value("metrics", json(nullptr));
  j["epochs"] = metrics.is_array() ? metrics.size() : 0;
  json final_val = nullptr, best = nullptr, best_epoch = nullptr;
  if (metrics.is_array())
    for (const auto& row : metrics) {
      if (!row.is_object() || !row.contains("val_exact") || !row["val_exact"].is_number()) continue;
      final_val = row["val_exact"];
      if (best.is_null() || row["val_exact"].get<double>() > best.get<double>()) {
        best = row["val_exact"];
        best_epoch = row.value("epoch", json(nullptr));
      }
    }
  j["final_val_exact"] = final_val;
  j["best_val_exact"] = best;
  j["best_epoch"] = best_epoch;

  // Every evaluation file, each an EvalReport; per split the figure at its last iteration.
  json evaluations = json::array(), results = json::object();
  for (const std::string& file : folder.eval_files()) {
    if (!readable(file)) continue;
    json e = json::object();
    read_json(dir, file, "report", false, e, errors);
    if (errors.contains(file)) continue;
    json report = e["report"];
    report["file"] = file;
    for (const auto& [split, curve] : report["splits"].items()) {
      const json& its = curve["iterations"];
      if (!its.is_array() || its.empty() || curve["exact"].size() != its.size() ||
          curve["per_position"].size() != its.size())
        continue;
      const json r = {{"exact", curve["exact"].back()},
                      {"per_position", curve["per_position"].back()},
                      {"iteration", its.back()},
                      {"count", curve["count"]},
                      {"weights", report["weights"]},
                      {"file", file}};
      if (!results.contains(split) || better_result(r, results[split])) results[split] = r;
    }
    evaluations.push_back(std::move(report));
  }
  j["results"] = results;

  // The paper's values where its tables have the run's task, norm, recall and learning rate.
  json paper = nullptr;
  if (!paper_tables_.is_null() && settings.is_object() && settings["train"].is_object()) {
    try {
      const json& model = settings["model"];
      const sweep::PaperValues p = sweep::paper_values(paper_tables_, model["task"], model["norm"], model["recall"],
                                                       settings["train"]["lr"].get<double>());
      if (p.val || p.hard)
        paper = {{"val", p.val ? json(*p.val) : json(nullptr)},
                 {"hard", p.hard ? json(*p.hard) : json(nullptr)},
                 {"val_table", p.val_table},
                 {"hard_table", p.hard_table}};
    } catch (const std::exception&) {
      // A task this looplab does not know has no paper values.
    }
  }
  j["paper"] = paper;

  if (full) {
    j["metrics"] = metrics;
    j["evaluations"] = evaluations;
    for (const auto& [file, key] : std::vector<std::pair<std::string, std::string>>{
             {RunFolder::kAnalysis, "analysis"}, {RunFolder::kEvalScaling, "scaling"}, {RunFolder::kEvalTrace, "trace"}}) {
      j[key] = nullptr;
      if (readable(file)) read_json(dir, file, key, false, j, errors);
    }
  }
  if (!errors.empty()) j["errors"] = errors;
  return j;
}

json Runs::list() const {
  json runs = json::array();
  std::error_code ec;
  const fs::path root = fs::canonical(root_, ec);
  if (ec || !fs::is_directory(root, ec)) return {{"root", root_}, {"exists", false}, {"runs", runs}};
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    std::error_code e2;
    const fs::path c = fs::canonical(entry.path(), e2);
    if (e2 || !is_inside(root, c) || !fs::is_directory(c, e2)) continue;  // symbolic links leading out
    if (fs::is_regular_file(c / RunFolder::kConfig, e2) || fs::is_regular_file(c / RunFolder::kMetrics, e2)) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  for (const auto& name : names) runs.push_back(summary(name, (root / name).string(), false));
  return {{"root", root_}, {"exists", true}, {"runs", runs}};
}

json Runs::run(const std::string& name) const { return summary(name, run_folder(name), true); }

std::string Runs::file(const std::string& name, const std::string& file) const {
  const auto& files = run_files();
  if (!RunFolder::is_eval_file(file) && std::find(files.begin(), files.end(), file) == files.end()) {
    std::string names;
    for (const auto& f : files) names += (names.empty() ? "" : ", ") + f;
    throw ApiError(404, "runs: '" + file + "' is not a run file (one of: eval.json, eval-NAME.json, " + names + ")");
  }
  const fs::path dir = run_folder(name);
  std::error_code ec;
  const fs::path p = dir / file;
  if (!fs::exists(p, ec)) throw ApiError(404, "runs: run '" + name + "' has no " + file);
  const fs::path c = fs::canonical(p, ec);
  if (ec || !is_inside(fs::canonical(root_), c)) throw ApiError(403, "runs: " + name + "/" + file + " leads outside the runs folder");
  if (!fs::is_regular_file(c, ec)) throw ApiError(404, "runs: " + name + "/" + file + " is not a file");
  return read_text(c);
}

}  // namespace looplab::serve
