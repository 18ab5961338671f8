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
//
// A run is served in today's words: through the library's readers (run/run_folder.h,
// run/reports.h), whatever schema version its files were written in, so that one setting is one
// key in every run (training.json's "max_iters" of version 2 is train.training_iters, config.json's
// "attention": "local" of version 1 is "neighbourhood"). The files as written stay available
// through file().
class Runs {
 public:
  // `paper_tables`: the paper's tables 4-6 (sweeps/paper_tables.json); "" or a missing file: no
  // paper values beside the runs.
  explicit Runs(std::string root, std::string paper_tables = "");
  const std::string& root() const { return root_; }

  // GET /api/runs: {root, exists, runs: [SUMMARY]}, each SUMMARY
  //   {name, files, schema_versions: {config.json: N, training.json: N},
  //    settings: {model, train, data} (config.json and training.json as read, current keys; train
  //      and data null for a bare model folder; settings null without a readable config.json),
  //    epochs, final_val_exact (the last epoch's), best_val_exact, best_epoch,
  //    results: {SPLIT: {exact, per_position, iteration, count, weights, file}} (per split, the
  //      evaluation at its last iteration, of the final weights where one is, else of others,
  //      named; then the most examples, then the latest iteration),
  //    paper: {val, hard, val_table, hard_table} where the paper's tables have the run's task,
  //      norm, recall and learning rate, else null,
  //    errors: {FILE: message}, only when a file could not be read}.
  nlohmann::json list() const;
  // GET /api/runs/NAME: SUMMARY and metrics (one object per line, metrics.jsonl as read),
  // evaluations ([{file, weights, iters, splits}] of eval_files(), eval.json first), analysis,
  // scaling; a missing file is null, an unreadable one null with its message under `errors`.
  nlohmann::json run(const std::string& name) const;
  // GET /api/runs/NAME/FILE for FILE one of run_files() or an evaluation file
  // (RunFolder::is_eval_file): the file's text, unchanged.
  std::string file(const std::string& name, const std::string& file) const;

  // The files a run may have that the API serves, besides its evaluation files.
  static const std::vector<std::string>& run_files();

 private:
  std::string root_;
  nlohmann::json paper_tables_;  // null when there are none
  // The canonical directory of run NAME; throws ApiError (400 bad name, 403 outside, 404 none).
  std::string run_folder(const std::string& name) const;
  // SUMMARY of the run folder `dir`, with metrics and evaluations kept when `full`.
  nlohmann::json summary(const std::string& name, const std::string& dir, bool full) const;
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
