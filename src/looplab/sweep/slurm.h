// SLURM as the engine beyond one machine: `looplab sweep submit` writes an sbatch array script
// whose task I runs `looplab sweep exec FILE --index I` (so a requeued or preempted task resumes
// its run), submits it with sbatch and records the job; `looplab sweep status` joins what SLURM
// reports (squeue; sacct where accounting exists) with the run folders. No LibTorch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "looplab/sweep/sweep_file.h"

namespace looplab::sweep {

struct SubmitOptions {
  std::string partition, gres, time;  // "" : SLURM's defaults
  int64_t max_parallel = 0;           // array tasks at once (0: no limit)
  int64_t threads_per_run = 1;        // --cpus-per-task and looplab's --threads (per rank)
  int64_t ranks_per_run = 1;          // > 1: --ntasks, and srun starts a data-parallel run
  std::string device = "cpu";
  std::string self;                   // the looplab executable (default: this process's)
};

// The runs not done yet as SLURM's array syntax ("0-3,5,7-9"); "" when every run is done.
std::string array_indices(const std::vector<int64_t>& indices);

// The script for the runs `indices`. Throws looplab::Error when threads_per_run or
// ranks_per_run is below 1 or max_parallel below 0.
std::string array_script(const Sweep& sw, const SubmitOptions& o, const std::vector<int64_t>& indices);
// The script for the runs not done yet (`sweep submit --dry-run`); throws when every run is done.
std::string array_script(const Sweep& sw, const SubmitOptions& o);

// Writes OUT/slurm/submit-N.sh, submits it and appends the job id to OUT/slurm/jobs.txt.
// Returns the job id. Throws looplab::Error with sbatch's message when it fails.
std::string submit(const Sweep& sw, const SubmitOptions& o);

// SLURM's state of each array task of the recorded jobs, by run index ("PENDING", "RUNNING",
// "COMPLETED", ...; the newest job wins); runs SLURM does not list are absent.
std::vector<std::pair<int64_t, std::string>> slurm_states(const Sweep& sw);

// `looplab sweep status`: plan_text's columns (state.h) with SLURM's state of each run.
std::string status_text(const Sweep& sw);

}  // namespace looplab::sweep
