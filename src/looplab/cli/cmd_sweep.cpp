// looplab sweep plan|run|exec|report FILE: the paper's grid as one command (docs/sweeps.md).
#include <cstdio>
#include <iostream>
#include <map>

#include "looplab/cli/commands.h"
#include "looplab/distributed/environment.h"
#include "looplab/runtime.h"
#include "looplab/io/atomic_file.h"
#include "looplab/sweep/execute.h"
#include "looplab/sweep/pool.h"
#include "looplab/sweep/report.h"
#include "looplab/sweep/slurm.h"
#include "looplab/sweep/state.h"
#include "looplab/util/error.h"

namespace looplab::cli {

namespace {

void plan(const sweep::Sweep& sw) {
  std::printf("sweep %s: %zu runs in %s\n", sw.name.c_str(), sw.runs.size(), sw.out.c_str());
  std::printf("%5s  %-8s %-9s %s\n", "index", "state", "epochs", "run");
  int64_t counts[4] = {0, 0, 0, 0};
  for (const sweep::Run& r : sw.runs) {
    const sweep::RunStatus st = sweep::run_status(sw, r);
    ++counts[static_cast<int>(st.state)];
    const std::string epochs = std::to_string(st.epochs_done) + "/" + std::to_string(r.spec.train.epochs);
    std::printf("%5lld  %-8s %-9s %s%s%s\n", static_cast<long long>(r.index), sweep::state_name(st.state), epochs.c_str(),
                r.name.c_str(), st.error.empty() ? "" : "  error: ", st.error.c_str());
  }
  std::printf("%lld pending, %lld running, %lld done, %lld failed\n", static_cast<long long>(counts[0]),
              static_cast<long long>(counts[1]), static_cast<long long>(counts[2]), static_cast<long long>(counts[3]));
}

// The run folders joined with SLURM's view of the submitted array tasks.
void status(const sweep::Sweep& sw) {
  std::map<int64_t, std::string> slurm;
  for (const auto& [index, state] : sweep::slurm_states(sw)) slurm[index] = state;
  std::printf("sweep %s: %zu runs in %s\n%5s  %-8s %-9s %-12s %s\n", sw.name.c_str(), sw.runs.size(), sw.out.c_str(),
              "index", "state", "epochs", "slurm", "run");
  for (const sweep::Run& r : sw.runs) {
    const sweep::RunStatus st = sweep::run_status(sw, r);
    const auto it = slurm.find(r.index);
    const std::string epochs = std::to_string(st.epochs_done) + "/" + std::to_string(r.spec.train.epochs);
    std::printf("%5lld  %-8s %-9s %-12s %s\n", static_cast<long long>(r.index), sweep::state_name(st.state),
                epochs.c_str(), it == slurm.end() ? "-" : it->second.c_str(), r.name.c_str());
  }
}

}  // namespace

Command add_sweep(CLI::App& parent) {
  auto* app = parent.add_subcommand("sweep", "A grid of runs from a sweep file: plan, run (a local pool), report");
  struct Options {
    std::string file, device = "cpu", paper = LOOPLAB_PAPER_TABLES;
    int64_t workers = 1, threads_per_run = 1, index = -1;
    double dist_timeout = 60;
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
  run_app->add_option("--workers", o->workers, "runs at a time")->capture_default_str();
  run_app->add_option("--threads-per-run", o->threads_per_run, "LibTorch threads of each run")->capture_default_str();
  for (auto* a : {run_app, exec_app}) a->add_option("--device", o->device, "cpu, cuda or cuda:N")->capture_default_str();
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
            if (plan_app->parsed()) return plan(sw);
            if (status_app->parsed()) return status(sw);
            if (submit_app->parsed()) {
              if (o->submit.threads_per_run < 1 || o->submit.max_parallel < 0 || o->submit.ranks_per_run < 1)
                throw Error("sweep submit: --threads-per-run and --ranks-per-run must be >= 1 and --max-parallel >= 0");
              if (o->dry_run) {
                const std::vector<int64_t> todo = sweep::runs_not_done(sw);
                if (todo.empty()) throw Error("sweep " + sw.name + ": every run is done, nothing to submit");
                std::cout << sweep::array_script(sw, o->submit, todo);
                return;
              }
              const std::string job = sweep::submit(sw, o->submit);
              std::printf("sweep %s: submitted job %s (%s/slurm/jobs.txt)\n", sw.name.c_str(), job.c_str(), sw.out.c_str());
              return;
            }
            if (exec_app->parsed()) {
              // Several ranks when srun started this task with --ntasks (submit --ranks-per-run).
              const auto ranks = Ranks::join(launch_from_environment(), parse_device(o->device),
                                             std::chrono::milliseconds(static_cast<int64_t>(o->dist_timeout * 1000)));
              if (sweep::execute_run(sw, o->index, o->device, *ranks) == sweep::ExecResult::kBusy)
                std::printf("sweep %s: run %lld is being run by another process\n", sw.name.c_str(),
                            static_cast<long long>(o->index));
              return;
            }
            if (run_app->parsed()) {
              sweep::PoolOptions p;
              p.workers = o->workers;
              p.threads_per_run = o->threads_per_run;
              p.device = o->device;
              const int64_t failed = sweep::run_pool(sw, p);
              if (failed) throw Error("sweep " + sw.name + ": " + std::to_string(failed) + " run(s) failed (sweep plan lists them)");
              return;
            }
            if (report_app->parsed()) {
              const sweep::Report r = sweep::make_report(sw, o->paper);
              make_directories(sw.out);
              write_file_atomic(sw.out + "/report.csv", sweep::to_csv(r));
              write_file_atomic(sw.out + "/" + sweep::kReportFile, sweep::to_json(r).dump(2) + "\n");
              write_file_atomic(sw.out + "/report.md", sweep::to_markdown(r));
              std::cout << sweep::to_markdown(r);
              std::fprintf(stderr, "wrote %s/report.{md,csv,json}\n", sw.out.c_str());
            }
          }};
}

}  // namespace looplab::cli
