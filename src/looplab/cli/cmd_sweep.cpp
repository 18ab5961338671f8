// looplab sweep plan|run|exec|report FILE: the paper's grid as one command (docs/sweeps.md).
#include <cstdio>
#include <iostream>

#include "looplab/cli/commands.h"
#include "looplab/distributed/ranks.h"
#include "looplab/platform/runtime.h"
#include "looplab/sweep/execute.h"
#include "looplab/sweep/pool.h"
#include "looplab/sweep/report.h"
#include "looplab/sweep/slurm.h"
#include "looplab/sweep/state.h"
#include "looplab/util/error.h"

namespace looplab::cli {

Command add_sweep(CLI::App& parent) {
  auto* app = parent.add_subcommand("sweep", "A grid of runs from a sweep file: plan, run (a local pool), report");
  struct Options {
    std::string file, paper = LOOPLAB_PAPER_TABLES;
    int64_t index = -1;
    double dist_timeout = 60;
    sweep::PoolOptions pool;  // its device is exec's too
    sweep::SubmitOptions submit;
    bool dry_run = false;
  };
  auto o = std::make_shared<Options>();
  auto* plan_app = app->add_subcommand("plan", "List the runs of FILE and their state (pending, running, done, failed)");
  auto* run_app = app->add_subcommand("run", "Run every run of FILE that is not done, N at a time (resumable)");
  auto* exec_app = app->add_subcommand("exec", "Run one run of FILE to its end (a pool worker or a SLURM array task)");
  auto* report_app = app->add_subcommand("report", "Tables of FILE's done runs beside the paper's (Markdown; CSV and JSON beside the runs)");
  auto* submit_app = app->add_subcommand("submit", "Submit FILE's runs that are not done as a SLURM array (sbatch)");
  auto* status_app = app->add_subcommand("status", "The runs of FILE with SLURM's state of their array tasks");
  for (auto* a : {plan_app, run_app, exec_app, report_app, submit_app, status_app})
    a->add_option("file", o->file, "sweep file (TOML)")->required();
  submit_app->add_option("--partition", o->submit.partition, "SLURM partition");
  submit_app->add_option("--gres", o->submit.gres, "generic resources per task, e.g. gpu:1");
  submit_app->add_option("--time", o->submit.time, "time limit per task, e.g. 8:00:00");
  submit_app->add_option("--max-parallel", o->submit.max_parallel, "array tasks at once (0: no limit)")->capture_default_str();
  submit_app->add_option("--threads-per-run", o->submit.threads_per_run, "CPUs per task and LibTorch threads")
      ->capture_default_str();
  submit_app->add_option("--device", o->submit.device, "cpu, cuda or cuda:N")->capture_default_str();
  submit_app->add_flag("--dry-run", o->dry_run, "print the script instead of submitting it");
  run_app->add_option("--workers", o->pool.workers, "runs at a time")->capture_default_str();
  run_app->add_option("--threads-per-run", o->pool.threads_per_run, "LibTorch threads of each run")->capture_default_str();
  for (auto* a : {run_app, exec_app}) a->add_option("--device", o->pool.device, "cpu, cuda or cuda:N")->capture_default_str();
  exec_app->add_option("--index", o->index, "the run's index (sweep plan lists them)")->required();
  exec_app->add_option("--dist-timeout", o->dist_timeout, "data-parallel runs: seconds to wait for a lost rank")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  submit_app->add_option("--ranks-per-run", o->submit.ranks_per_run,
                         "data-parallel ranks (SLURM tasks) per run, started by srun (docs/distributed.md)")
      ->capture_default_str();
  report_app->add_option("--paper", o->paper, "the paper's tables 4-6 as JSON")->capture_default_str();
  app->require_subcommand(1);
  return {app, [o, plan_app, run_app, exec_app, report_app, submit_app, status_app] {
            const sweep::Sweep sw = sweep::load_sweep(o->file);
            if (plan_app->parsed()) std::cout << sweep::plan_text(sw);
            if (status_app->parsed()) std::cout << sweep::status_text(sw);
            if (submit_app->parsed() && o->dry_run) std::cout << sweep::array_script(sw, o->submit);
            if (submit_app->parsed() && !o->dry_run) {
              const std::string job = sweep::submit(sw, o->submit);
              std::printf("sweep %s: submitted job %s (%s/slurm/jobs.txt)\n", sw.name.c_str(), job.c_str(), sw.out.c_str());
              return;
            }
            if (exec_app->parsed()) {
              // Several ranks when srun started this task with --ntasks (submit --ranks-per-run).
              const auto ranks = Ranks::join_launched(parse_device(o->pool.device), o->dist_timeout);
              if (sweep::execute_run(sw, o->index, o->pool.device, *ranks) == sweep::ExecResult::kBusy)
                std::printf("sweep %s: run %lld is being run by another process\n", sw.name.c_str(),
                            static_cast<long long>(o->index));
            }
            if (run_app->parsed()) {
              const int64_t failed = sweep::run_pool(sw, o->pool);
              if (failed) throw Error("sweep " + sw.name + ": " + std::to_string(failed) + " run(s) failed (sweep plan lists them)");
            }
            if (report_app->parsed()) {
              std::cout << sweep::write_report(sw, o->paper);
              std::fprintf(stderr, "wrote %s/report.{md,csv,json}\n", sw.out.c_str());
            }
          }};
}

}  // namespace looplab::cli
