// The JSON API of `looplab serve`, independent of HTTP: every function takes the request's
// decoded path pieces and query parameters and returns the response body, or throws ApiError
// with a 4xx status and a message. A thin layer over the engines the command line uses
// (looplab::explore and looplab::analysis geometry) and over run folders on disk; nothing
// is computed here that the engines do not compute. No LibTorch.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "looplab/util/error.h"

namespace looplab::serve {

// A bad request: status 400 (malformed or out of range), 403 (outside the runs folder) or 404
// (no such illustration, run or file).
class ApiError : public Error {
 public:
  ApiError(int status, const std::string& message) : Error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

// Query parameters as received (a name may come more than once; that is an error for us).
using Query = std::multimap<std::string, std::string>;

// GET /api/explore: the illustrations in the seed's order (name, number, title, parameters).
nlohmann::json explore_list();
// GET /api/explore/NAME?PARAM=VALUE...: exactly `looplab explore NAME --set PARAM=VALUE --json`.
// 404 for an unknown name, 400 for an unknown parameter, a repeated one, or a bad value.
nlohmann::json explore_one(const std::string& name, const Query& query);

// GET /api/regions?xmin&xmax&ymin&ymax&n: `looplab analyze regions --json` (n <= 801).
nlohmann::json regions(const Query& query);
// GET /api/anisotropy?n&sigma=0.5,1,2,4&seed: `looplab analyze anisotropy --json` (n <= 100000,
// at most 8 sigmas).
nlohmann::json anisotropy(const Query& query);
// GET /api/phase?lx&ly&steps&starts&radius: `looplab analyze phase --json` (steps <= 10000,
// starts <= 360).
nlohmann::json phase(const Query& query);

// Run directories: the immediate subdirectories of the runs folder that hold a config.json or a
// metrics.jsonl. Files of a run are read only when their canonical path lies inside the runs
// folder's canonical path (no '..', no absolute path, no symbolic link leading out).
class Runs {
 public:
  explicit Runs(std::string root);
  const std::string& root() const { return root_; }

  // GET /api/runs: {root, runs: [{name, files: [...], config, epochs, best_val_exact}]}.
  nlohmann::json list() const;
  // GET /api/runs/NAME: {name, files, config, training, metrics (one object per line), eval,
  // analysis}; a missing file is null, an unreadable one null with its message under `errors`.
  nlohmann::json run(const std::string& name) const;
  // GET /api/runs/NAME/FILE for FILE one of run_files(): the file's text, unchanged.
  std::string file(const std::string& name, const std::string& file) const;

  // The files a run may have that the API serves.
  static const std::vector<std::string>& run_files();

 private:
  std::string root_;
  // The canonical directory of run NAME; throws ApiError (400 bad name, 403 outside, 404 none).
  std::string run_folder(const std::string& name) const;
};

// Sweep reports: the immediate subdirectories of the sweeps folder that hold the report.json of
// `looplab sweep report` (a sweep's runs folder). Read with the same confinement as Runs.
class Sweeps {
 public:
  explicit Sweeps(std::string root);
  // GET /api/sweeps: {root, sweeps: [{name, file, eval_iters, groups, runs_done, runs_planned}]}.
  nlohmann::json list() const;
  // GET /api/sweeps/NAME: the report.json, as written (400 bad name, 403 outside, 404 none).
  nlohmann::json report(const std::string& name) const;

 private:
  std::string root_;
};

}  // namespace looplab::serve
