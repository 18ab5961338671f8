// The JSON API of `looplab serve` over HTTP: a server on an ephemeral port of 127.0.0.1 in this
// process, asked with httplib::Client. Every answer is compared with the engine called directly;
// every kind of bad input must give a 4xx JSON error with a message, and never a file from
// outside the runs folder.
#include <gtest/gtest.h>

#include <httplib.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <set>
#include <fstream>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "looplab/analysis/geometry.h"
#include "looplab/explore/explore.h"
#include "looplab/model/config.h"
#include "looplab/run/run_folder.h"
#include "looplab/run/run_spec.h"
#include "looplab/serve/server.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

class ServeApi : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("looplab_serve_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    const fs::path runs = dir_ / "runs";
    write(dir_ / "web" / "index.html", "<!doctype html><title>looplab</title>\n");
    write(dir_ / "secret" / "eval.json", "{\"secret\": true}\n");
    write(dir_ / "secret" / "config.json", "{\"secret\": true}\n");
    // alpha: a current run folder (config.json and training.json as `looplab train` writes them,
    // the paper's prefix-sums cell external / post / lr 3e-4), three epochs.
    {
      looplab::RunSpec spec = looplab::preset_spec("paper", "prefix-sums", looplab::Recall::kExternal, looplab::Norm::kPost);
      spec.train.lr = 3e-4;
      write(runs / "alpha" / "config.json", looplab::to_json(spec.model).dump(2) + "\n");
      looplab::RunFolder((runs / "alpha").string()).write_spec(spec);
    }
    write(runs / "alpha" / "metrics.jsonl",
          "{\"epoch\":0,\"loss\":0.7,\"val_exact\":0.25}\n{\"epoch\":1,\"loss\":0.5,\"val_exact\":0.75}\n"
          "{\"epoch\":2,\"loss\":0.4,\"val_exact\":0.5}\n\n");
    // beta: a bare model folder (no training.json) with three evaluations: eval.json of the best
    // weights, and one file per split of the final ones, as scripts/paper-prefix-sums writes them.
    write(runs / "beta" / "config.json",
          looplab::to_json(looplab::default_config("sudoku", looplab::Recall::kExternal, looplab::Norm::kPost)).dump() + "\n");
    const auto eval_text = [](const std::string& weights, const std::string& split, int count, double exact) {
      return "{\"iters\": [1, 2], \"weights\": \"" + weights + "\", \"splits\": {\"" + split + "\": {\"count\": " +
             std::to_string(count) + ", \"positions\": 81, \"iterations\": [1, 2], \"exact\": [0.0, " + std::to_string(exact) +
             "], \"per_position\": [0.5, 0.75], \"relative_step\": [1.0, 0.5], \"unchanged\": [0.0, 1.0]}}}\n";
    };
    write(runs / "beta" / "eval.json", eval_text("best.safetensors", "val", 50, 0.875));
    write(runs / "beta" / "eval-val.json", eval_text("model.safetensors", "val", 20, 0.625));
    write(runs / "beta" / "eval-hard.json", eval_text("model.safetensors", "hard", 10, 0.125));
    write(runs / "beta" / "eval.partial.json", "{\"sums\": 1}\n");  // an evaluation under way: not one
    // old and current: the same run as a version-1 folder (tests/serve/fixtures) and as the
    // shipped current one.
    for (const char* f : {"config.json", "training.json", "metrics.jsonl"}) {
      fs::create_directories(runs / "old");
      fs::copy_file(fs::path(LOOPLAB_SOURCE_DIR) / "tests/serve/fixtures/prefix-sums-version-1" / f, runs / "old" / f);
    }
    for (const char* f : {"config.json", "training.json"}) {
      fs::create_directories(runs / "current");
      fs::copy_file(fs::path(LOOPLAB_SOURCE_DIR) / "models/prefix-sums-external-post" / f, runs / "current" / f);
    }
    write(runs / "broken" / "config.json", "{not json\n");
    write(runs / "notes.txt", "not a run\n");
    fs::create_directories(runs / "empty");
    fs::create_directory_symlink(dir_ / "secret", runs / "escape");           // a run linking out
    fs::create_symlink(dir_ / "secret" / "eval.json", runs / "alpha" / "eval.json");  // a file linking out

    const fs::path sweeps = dir_ / "sweeps";
    write(sweeps / "grid" / "report.json",
          "{\"schema_version\": 1, \"sweep\": \"grid\", \"file\": \"grid.toml\", \"eval_iters\": 500, \"groups\": ["
          "{\"group\": \"recall-none\", \"runs\": [\"recall-none_seed-0\"], \"runs_planned\": 2},"
          "{\"group\": \"recall-external\", \"runs\": [], \"runs_planned\": 2}], \"figure3\": [], \"figure6\": []}\n");
    write(sweeps / "torn" / "report.json", "{\"groups\": [\n");
    write(sweeps / "future" / "report.json", "{\"schema_version\": 9, \"groups\": []}\n");
    fs::create_directories(sweeps / "unreported");
    fs::create_directory_symlink(dir_ / "secret", sweeps / "escape");
    write(dir_ / "secret" / "report.json", "{\"secret\": true, \"groups\": []}\n");

    looplab::serve::ServeOptions o;
    o.port = 0;
    o.runs = runs.string();
    o.sweeps = sweeps.string();
    o.web = (dir_ / "web").string();
    o.paper_tables = LOOPLAB_SOURCE_DIR "/sweeps/paper_tables.json";
    server_ = new looplab::serve::Server(o);
    port_ = server_->bind();
    thread_ = new std::thread([] { server_->listen(); });
  }
  static void TearDownTestSuite() {
    server_->stop();
    thread_->join();
    delete thread_;
    delete server_;
    fs::remove_all(dir_);
  }

  static httplib::Result get(const std::string& path) {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(60, 0);
    return c.Get(path.c_str());
  }
  // GET, expecting `status` and a JSON body.
  static json get_json(const std::string& path, int status = 200) {
    auto r = get(path);
    EXPECT_TRUE(r) << path << ": no answer";
    if (!r) return nullptr;
    EXPECT_EQ(r->status, status) << path << ": " << r->body;
    EXPECT_EQ(r->get_header_value("Content-Type"), "application/json") << path;
    return json::parse(r->body);
  }
  // A 4xx whose JSON names the problem.
  static void expect_error(const std::string& path, int status, const std::string& part) {
    const json j = get_json(path, status);
    ASSERT_TRUE(j.is_object()) << path;
    ASSERT_TRUE(j.contains("error")) << path << ": " << j.dump();
    EXPECT_NE(j["error"].get<std::string>().find(part), std::string::npos) << path << ": " << j["error"];
    EXPECT_EQ(j["status"], status);
  }

  static fs::path dir_;
  static looplab::serve::Server* server_;
  static std::thread* thread_;
  static int port_;
};

fs::path ServeApi::dir_;
looplab::serve::Server* ServeApi::server_ = nullptr;
std::thread* ServeApi::thread_ = nullptr;
int ServeApi::port_ = 0;

TEST_F(ServeApi, ExploreListHasTheEightIllustrations) {
  const json j = get_json("/api/explore");
  ASSERT_EQ(j.size(), 8u);
  const auto& reg = looplab::explore::registry();
  for (size_t i = 0; i < reg.size(); ++i) {
    EXPECT_EQ(j[i]["name"], reg[i].name);
    EXPECT_EQ(j[i]["title"], reg[i].title);
    EXPECT_FALSE(j[i]["parameters"].empty());
  }
}

TEST_F(ServeApi, ExploreEqualsTheEngineAtDefaultsAndWithSettings) {
  for (const auto& ill : looplab::explore::registry())
    EXPECT_EQ(get_json("/api/explore/" + ill.name), looplab::explore::run(ill.name)) << ill.name;
  EXPECT_EQ(get_json("/api/explore/memory-decay?a=0.5"), looplab::explore::run("memory-decay", {{"a", "0.5"}}));
  EXPECT_EQ(get_json("/api/explore/jacobian-products?gain=2&arrangement=alternating"),
            looplab::explore::run("jacobian-products", {{"gain", "2"}, {"arrangement", "alternating"}}));
  EXPECT_EQ(get_json("/api/explore/lru?nu=0.1&turns=0.25"),
            looplab::explore::run("lru", {{"nu", "0.1"}, {"turns", "0.25"}}));
}

// The API's numbers against closed forms written out here, not against the engine the handler
// calls: h_t = a h_{t-1} + u_t weighs an input from lag l by a^l, a constant input of ones gives
// h_3 = 1 + a + a^2 + a^3, and the weight reaches 1/e after -1/ln a steps; a product of k aligned
// matrices of gain g has size g^k.
TEST_F(ServeApi, ExploreAgreesWithClosedForms) {
  auto readout = [](const json& j, const std::string& key) {
    for (const json& r : j["readouts"])
      if (r["key"] == key) return r["value"].get<double>();
    ADD_FAILURE() << "no readout " << key;
    return 0.0;
  };
  for (double a : {0.5, 0.9, -0.7}) {
    const json j = get_json("/api/explore/memory-decay?a=" + std::to_string(a));
    const json& weight = j["plots"][0]["series"][0];
    ASSERT_EQ(weight["name"], "weight");
    for (size_t l = 0; l < weight["y"].size(); ++l)
      EXPECT_NEAR(weight["y"][l].get<double>(), std::pow(a, static_cast<double>(l)), 1e-12) << "a=" << a << " lag " << l;
    EXPECT_NEAR(readout(j, "weight_lag3"), a * a * a, 1e-12);
    EXPECT_NEAR(readout(j, "state_after_3"), 1 + a + a * a + a * a * a, 1e-12);
    if (a > 0) EXPECT_NEAR(readout(j, "steps_to_1e"), -1 / std::log(a), 1e-12);
  }
  for (double g : {0.8, 2.0}) {
    const json j = get_json("/api/explore/jacobian-products?gain=" + std::to_string(g) + "&arrangement=aligned");
    EXPECT_NEAR(readout(j, "product_size"), std::pow(g, 10), 1e-9 * std::pow(g, 10)) << "gain " << g;
    const json& product = j["plots"][0]["series"][0];
    for (size_t k = 0; k < product["y"].size(); ++k)
      EXPECT_NEAR(product["y"][k].get<double>(), std::pow(g, static_cast<double>(k)), 1e-9 * std::pow(g, k)) << k;
  }
}

TEST_F(ServeApi, ExploreBadInputIsA4xxWithAMessage) {
  expect_error("/api/explore/no-such-thing", 404, "unknown illustration 'no-such-thing'");
  expect_error("/api/explore/memory-decay?a=5", 400, "a");
  expect_error("/api/explore/memory-decay?a=banana", 400, "a");
  expect_error("/api/explore/memory-decay?b=1", 400, "b");
  expect_error("/api/explore/memory-decay?a=0.5&a=0.6", 400, "given twice");
  expect_error("/api/explore/jacobian-products?arrangement=sideways", 400, "sideways");
  expect_error("/api/explore/hippo?m=3.5", 400, "m");
}

TEST_F(ServeApi, GeometryEqualsTheEngine) {
  namespace ag = looplab::geometry;
  EXPECT_EQ(get_json("/api/regions"), ag::to_json(ag::region_grid(-10, 10, -6, 6, 201)));
  EXPECT_EQ(get_json("/api/regions?xmin=-3&xmax=2&ymin=-4&ymax=1&n=31"), ag::to_json(ag::region_grid(-3, 2, -4, 1, 31)));
  EXPECT_EQ(get_json("/api/anisotropy?n=500&sigma=1,2&seed=3"), ag::to_json(ag::anisotropy(500, {1, 2}, 3)));
  EXPECT_EQ(get_json("/api/phase?lx=0.5&ly=1.5"), ag::to_json(ag::phase_portrait(0.5, 1.5, 30, 16, 1)));
  EXPECT_EQ(get_json("/api/phase?lx=-0.9&ly=0.7&steps=50&starts=8&radius=2"),
            ag::to_json(ag::phase_portrait(-0.9, 0.7, 50, 8, 2)));
}

TEST_F(ServeApi, GeometryBadInputIsA4xxWithAMessage) {
  expect_error("/api/regions?n=5000", 400, "n = 5000 is out of range");
  expect_error("/api/regions?n=0", 400, "out of range");
  expect_error("/api/regions?xmin=abc", 400, "not a finite number");
  expect_error("/api/regions?xmin=nan", 400, "not a finite number");
  expect_error("/api/regions?xmin=3&xmax=1", 400, "");  // the engine's own check
  expect_error("/api/regions?zoom=2", 400, "unknown parameter 'zoom'");
  expect_error("/api/anisotropy?sigma=-1", 400, "sigma");
  expect_error("/api/anisotropy?sigma=1,,2", 400, "sigma");
  expect_error("/api/anisotropy?n=1", 400, "out of range");
  expect_error("/api/anisotropy?n=10000000", 400, "out of range");
  expect_error("/api/phase?lx=0.5", 400, "lx and ly are required");
  expect_error("/api/phase?lx=0.5&ly=1&steps=0", 400, "steps");
  expect_error("/api/phase?lx=0.5&ly=1&starts=100000", 400, "starts");
  expect_error("/api/nothing-here", 404, "no API endpoint");
}

TEST_F(ServeApi, RunsListsRunFoldersOnly) {
  const json j = get_json("/api/runs");
  std::vector<std::string> names;
  for (const auto& r : j["runs"]) names.push_back(r["name"]);
  // No "escape" (links out), no "empty" (no config.json nor metrics.jsonl), no plain file.
  EXPECT_EQ(names, (std::vector<std::string>{"alpha", "beta", "broken", "current", "old"}));
  const json& alpha = j["runs"][0];
  EXPECT_EQ(alpha["epochs"], 3);
  // The final epoch's val accuracy first (the paper reports final weights), the best beside it.
  EXPECT_EQ(alpha["final_val_exact"], 0.5);
  EXPECT_EQ(alpha["best_val_exact"], 0.75);
  EXPECT_EQ(alpha["best_epoch"], 1);
  EXPECT_EQ(alpha["settings"]["model"]["recall"], "external");
  EXPECT_EQ(alpha["settings"]["train"]["lr"], 3e-4);
  EXPECT_TRUE(j["runs"][2]["settings"].is_null());
  EXPECT_TRUE(j["runs"][2]["errors"].contains("config.json"));
}

// The paper's values beside a run whose task, norm, recall and learning rate are a cell of its
// tables, read here from sweeps/paper_tables.json by their keys.
TEST_F(ServeApi, RunsShowThePapersValuesOfTheirConfiguration) {
  std::ifstream in(LOOPLAB_SOURCE_DIR "/sweeps/paper_tables.json");
  const json tables = json::parse(in);
  const json j = get_json("/api/runs");
  const json& alpha = j["runs"][0];
  ASSERT_TRUE(alpha["paper"].is_object()) << alpha.dump();
  EXPECT_EQ(alpha["paper"]["val"], tables["table4_val"]["prefix-sums/post/external/3e-4"]);
  EXPECT_EQ(alpha["paper"]["hard"], tables["table5_hard"]["prefix-sums/post/external/3e-4"]);
  // current: external / post at lr 1e-3 (the cpu preset's), a cell of the tables too.
  const json& current = j["runs"][3];
  EXPECT_EQ(current["paper"]["val"], tables["table4_val"]["prefix-sums/post/external/1e-3"]);
  // beta has no training.json (no learning rate): no paper values.
  EXPECT_TRUE(j["runs"][1]["paper"].is_null());
}

// Every evaluation file is read; a split's figure is the final weights' where there is one.
TEST_F(ServeApi, RunsReadEveryEvaluationFile) {
  const json b = get_json("/api/runs/beta");
  std::vector<std::string> files;
  for (const auto& e : b["evaluations"]) files.push_back(e["file"]);
  EXPECT_EQ(files, (std::vector<std::string>{"eval.json", "eval-hard.json", "eval-val.json"}));
  EXPECT_EQ(b["evaluations"][1]["weights"], "model.safetensors");
  EXPECT_EQ(b["evaluations"][1]["splits"]["hard"]["exact"], json::array({0.0, 0.125}));
  // val: eval.json has more examples but of the best weights; eval-val.json's final weights win.
  EXPECT_EQ(b["results"]["val"]["exact"], 0.625);
  EXPECT_EQ(b["results"]["val"]["file"], "eval-val.json");
  EXPECT_EQ(b["results"]["val"]["iteration"], 2);
  EXPECT_EQ(b["results"]["hard"]["exact"], 0.125);
  EXPECT_EQ(b["results"]["hard"]["count"], 10);
  auto r = get("/api/runs/beta/eval-hard.json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_NE(r->body.find("\"hard\""), std::string::npos);
  expect_error("/api/runs/beta/eval.partial.json", 404, "not a run file");
  expect_error("/api/runs/beta/eval-.json", 404, "not a run file");
}

// A version-1 folder (written before schema versions) and a current one come out in the same
// words: the same keys, old names read as today's.
TEST_F(ServeApi, RunsServeEachSettingUnderOneName) {
  const json old_run = get_json("/api/runs/old"), current = get_json("/api/runs/current");
  std::function<void(const json&, const std::string&, std::set<std::string>&)> keys =
      [&](const json& j, const std::string& prefix, std::set<std::string>& out) {
        for (const auto& [k, v] : j.items())
          if (v.is_object()) keys(v, prefix + k + ".", out);
          else out.insert(prefix + k);
      };
  std::set<std::string> a, b;
  keys(old_run["settings"], "", a);
  keys(current["settings"], "", b);
  EXPECT_EQ(a, b);
  EXPECT_TRUE(a.count("train.training_iters")) << "training.json version 1's max_iters is train.training_iters";
  EXPECT_FALSE(a.count("train.max_iters"));
  EXPECT_FALSE(a.count("model.version"));
  EXPECT_EQ(old_run["settings"]["train"]["training_iters"], 30);
  EXPECT_EQ(old_run["settings"]["model"]["attention"], "neighbourhood");
  EXPECT_EQ(current["settings"]["model"]["attention"], "neighbourhood");
  EXPECT_EQ(old_run["schema_versions"], (json{{"config.json", 1}, {"training.json", 1}}));
  EXPECT_EQ(current["schema_versions"]["config.json"], 2);
  // metrics.jsonl's version-1 names read as today's.
  EXPECT_TRUE(old_run["metrics"][0].contains("val_exact"));
  EXPECT_FALSE(old_run["metrics"][0].contains("val_accuracy"));
  // The raw file stays available as written.
  auto r = get("/api/runs/old/config.json");
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("\"local\""), std::string::npos);
}

TEST_F(ServeApi, RunServesItsFilesParsed) {
  const json a = get_json("/api/runs/alpha");
  EXPECT_EQ(a["settings"]["model"]["task"], "prefix-sums");
  EXPECT_EQ(a["settings"]["train"]["lr"], 3e-4);
  ASSERT_EQ(a["metrics"].size(), 3u);
  EXPECT_EQ(a["metrics"][1]["loss"], 0.5);
  EXPECT_TRUE(a["analysis"].is_null());
  // eval.json is a link to a file outside the runs folder: not read.
  EXPECT_TRUE(a["evaluations"].empty());
  EXPECT_TRUE(a["errors"].contains("eval.json"));
  const json b = get_json("/api/runs/beta");
  EXPECT_EQ(b["evaluations"][0]["iters"], json::array({1, 2}));
  EXPECT_TRUE(b["metrics"].is_null());
  EXPECT_TRUE(b["settings"]["train"].is_null());
  auto r = get("/api/runs/alpha/metrics.jsonl");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body.substr(0, 10), "{\"epoch\":0");
}

TEST_F(ServeApi, SweepsListsReportsAndServesThem) {
  const json list = get_json("/api/sweeps");
  std::vector<std::string> names;
  for (const auto& e : list["sweeps"]) names.push_back(e["name"]);
  // "escape" links out: its report is refused, so it is listed with an error, never its content.
  EXPECT_EQ(names, (std::vector<std::string>{"escape", "future", "grid", "torn"}));
  for (const auto& e : list["sweeps"]) {
    EXPECT_EQ(e.dump().find("\"secret\""), std::string::npos) << e.dump();
    if (e["name"] == "grid") {
      EXPECT_EQ(e["groups"], 2);
      EXPECT_EQ(e["runs_done"], 1);
      EXPECT_EQ(e["runs_planned"], 4);
      EXPECT_EQ(e["eval_iters"], 500);
    } else {
      EXPECT_TRUE(e.contains("error")) << e.dump();
    }
  }
  const json grid = get_json("/api/sweeps/grid");
  EXPECT_EQ(grid["sweep"], "grid");
  EXPECT_EQ(grid["groups"].size(), 2u);
  expect_error("/api/sweeps/torn", 400, "torn/report.json");
  expect_error("/api/sweeps/future", 400, "is newer than this looplab reads (1)");
  expect_error("/api/sweeps/unreported", 404, "has no report.json");
  expect_error("/api/sweeps/escape", 403, "outside the sweeps folder");
  expect_error("/api/sweeps/..", 400, "not a sweep name");
  expect_error("/api/sweeps/%2e%2e%2fsecret", 400, "");
  expect_error("/api/sweeps/nothing", 404, "no sweep 'nothing'");
}

TEST_F(ServeApi, NothingOutsideTheRunsFolder) {
  expect_error("/api/runs/escape", 403, "outside the runs folder");
  expect_error("/api/runs/escape/config.json", 403, "outside the runs folder");
  expect_error("/api/runs/alpha/eval.json", 403, "outside the runs folder");
  expect_error("/api/runs/..", 400, "not a run name");
  expect_error("/api/runs/../secret/eval.json", 400, "");
  expect_error("/api/runs/%2e%2e/secret/eval.json", 400, "");
  expect_error("/api/runs/%2e%2e%2fsecret%2feval.json", 400, "");
  expect_error("/api/runs/alpha/..%2f..%2fsecret%2feval.json", 400, "");
  expect_error("/api/runs//etc/passwd", 400, "");
  expect_error("/api/runs/%2fetc%2fpasswd", 400, "");
  expect_error("/api/runs/alpha/model.safetensors", 404, "not a run file");
  expect_error("/api/runs/alpha/analysis.json", 404, "has no analysis.json");
  expect_error("/api/runs/nobody", 404, "no run 'nobody'");
  expect_error("/api/runs/notes.txt", 404, "not a run folder");
  // Static files: the web folder only.
  for (const char* p : {"/../runs/alpha/config.json", "/%2e%2e/secret/eval.json", "/..%2fsecret%2feval.json"}) {
    auto r = get(p);
    ASSERT_TRUE(r) << p;
    EXPECT_GE(r->status, 400) << p;
    EXPECT_EQ(r->body.find("\"secret\": true"), std::string::npos) << p;
  }
  // Still serving.
  EXPECT_EQ(get_json("/api/explore").size(), 8u);
}

// Paths and queries put together at random from hostile pieces: every answer is below 500,
// never the content of a file outside the runs folder, and the server keeps answering.
TEST_F(ServeApi, RandomHostileRequestsNeverCrashOrEscape) {
  const std::vector<std::string> prefixes = {"/api/runs/", "/api/sweeps/", "/api/explore/", "/api/", "/", "/api/runs/alpha/", "/api/regions?",
                                             "/api/phase?", "/api/anisotropy?", "/api/explore/memory-decay?"};
  const std::vector<std::string> pieces = {"..", "%2e%2e", "%2f", "/", "%2F", "alpha", "escape", "secret", "eval.json",
                                           "config.json", "%00", "%", "%zz", "a=", "=1", "&", "n=1e309", "lx=-0", "xmin=",
                                           "sigma=1,2,", "%c3%28", "~", "\\", ".", "...", "etc", "passwd", "%2e", "a=0.5"};
  std::mt19937 rng(7);
  for (int i = 0; i < 400; ++i) {
    std::string path = prefixes[rng() % prefixes.size()];
    const int n = 1 + static_cast<int>(rng() % 6);
    for (int k = 0; k < n; ++k) path += pieces[rng() % pieces.size()];
    auto r = get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_LT(r->status, 500) << path << ": " << r->body;
    EXPECT_EQ(r->body.find("\"secret\": true"), std::string::npos) << path;
  }
  EXPECT_EQ(get_json("/api/explore").size(), 8u);
}

TEST_F(ServeApi, ServesTheFrontEnd) {
  auto r = get("/");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_NE(r->body.find("<title>looplab</title>"), std::string::npos);
  r = get("/missing.html");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
}

#ifdef LOOPLAB_WEB_DIR
// The shipped front end: every page and every vendored library is served with its type.
TEST(ServeWeb, ShippedPagesAndLibrariesAreServed) {
  looplab::serve::ServeOptions o;
  o.port = 0;
  o.web = LOOPLAB_WEB_DIR;
  o.runs = (fs::temp_directory_path() / "looplab_serve_no_runs").string();
  looplab::serve::Server server(o);
  const int port = server.bind();
  std::thread t([&] { server.listen(); });
  httplib::Client c("127.0.0.1", port);
  for (const auto& [path, type] : std::vector<std::pair<std::string, std::string>>{
           {"/", "text/html"},
           {"/explore.html", "text/html"},
           {"/regions.html", "text/html"},
           {"/anisotropy.html", "text/html"},
           {"/phase.html", "text/html"},
           {"/runs.html", "text/html"},
           {"/sweeps.html", "text/html"},
           {"/js/sweeps.js", "text/javascript"},
           {"/js/lab.js", "text/javascript"},
           {"/css/lab.css", "text/css"},
           {"/vendor/uPlot.iife.min.js", "text/javascript"},
           {"/vendor/uPlot.min.css", "text/css"},
           {"/vendor/katex/katex.min.js", "text/javascript"},
           {"/vendor/katex/katex.min.css", "text/css"},
           {"/vendor/katex/fonts/KaTeX_Main-Regular.woff2", "font/woff2"}}) {
    auto r = c.Get(path.c_str());
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 200) << path;
    EXPECT_EQ(r->get_header_value("Content-Type"), type) << path;
    EXPECT_GT(r->body.size(), 100u) << path;
  }
  const json runs = json::parse(c.Get("/api/runs")->body);
  EXPECT_EQ(runs["exists"], false);
  server.stop();
  t.join();
}
#endif

}  // namespace
