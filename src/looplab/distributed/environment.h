// Where a process sits in a data-parallel run, read from its launcher's environment: torchrun's
// convention (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT) or
// SLURM's for a step started by srun (SLURM_PROCID, SLURM_STEP_NUM_TASKS, SLURM_LOCALID, the
// first host of SLURM_STEP_NODELIST). No LibTorch here: the thread count is chosen from it
// before LibTorch starts, and the parsing is tested on its own.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>

namespace looplab {

struct Launch {
  int rank = 0, world_size = 1;
  int local_rank = 0, local_world_size = 1;  // on this host
  std::string master_addr = "127.0.0.1";     // where rank 0 hosts the rendezvous store
  int master_port = 29500;
  std::string launcher = "none";  // "none", "torchrun" (or any launcher that sets RANK) or "slurm"
  bool distributed() const { return world_size > 1; }
};

using Environment = std::function<const char*(const char*)>;

// Throws looplab::Error naming the variable for a malformed or inconsistent value.
Launch launch_from_environment(const Environment& env = [](const char* name) { return std::getenv(name); });

// SLURM's host lists: the first host of "node[03-05,9],gpu1" is "node03".
std::string first_host(const std::string& nodelist);
// SLURM's tasks per node, "2(x3),1": the count on node `node` (0-based).
int tasks_on_node(const std::string& tasks_per_node, int node);

// LibTorch threads per rank when the user sets none: the cores this process may run on,
// shared by the ranks on its host (at least 1).
int default_threads(const Launch& launch);
// default_threads of this process's launch; a malformed launch environment counts as none here
// (it is train's to report, not every command's).
int default_thread_count();

}  // namespace looplab
