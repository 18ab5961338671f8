#include "looplab/distributed/environment.h"

#include <sched.h>

#include <algorithm>
#include <cctype>
#include <thread>

#include "looplab/util/error.h"

namespace looplab {

namespace {

// A whole non-negative decimal number, or an error naming the variable.
int64_t whole_number(const char* name, const std::string& text, int64_t max) {
  if (text.empty() || text.size() > 18 || !std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); }))
    throw Error("environment variable " + std::string(name) + "='" + text + "': expected a whole number");
  const int64_t v = std::stoll(text);
  if (v > max) throw Error("environment variable " + std::string(name) + "=" + text + ": at most " + std::to_string(max));
  return v;
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

}  // namespace

std::string first_host(const std::string& nodelist) {
  // "a[1-3,7],b" -> "a1"; the zero padding of "[03-05]" is kept as written.
  const size_t comma = nodelist.find(',');
  const size_t bracket = nodelist.find('[');
  if (bracket == std::string::npos || (comma != std::string::npos && comma < bracket))
    return nodelist.substr(0, comma);
  const size_t end = nodelist.find_first_of("-,]", bracket + 1);
  if (end == std::string::npos || end == bracket + 1) throw Error("SLURM node list '" + nodelist + "': malformed");
  return nodelist.substr(0, bracket) + nodelist.substr(bracket + 1, end - bracket - 1);
}

int tasks_on_node(const std::string& tasks_per_node, int node) {
  // "2(x3),1": nodes 0-2 run 2 tasks, node 3 runs 1.
  int seen = 0;
  size_t pos = 0;
  while (pos < tasks_per_node.size()) {
    size_t next = tasks_per_node.find(',', pos);
    if (next == std::string::npos) next = tasks_per_node.size();
    const std::string item = tasks_per_node.substr(pos, next - pos);
    const size_t paren = item.find("(x");
    const int64_t count = whole_number("SLURM_STEP_TASKS_PER_NODE", item.substr(0, paren), 1 << 20);
    int64_t repeat = 1;
    if (paren != std::string::npos) {
      if (item.back() != ')') throw Error("SLURM_STEP_TASKS_PER_NODE='" + tasks_per_node + "': malformed");
      repeat = whole_number("SLURM_STEP_TASKS_PER_NODE", item.substr(paren + 2, item.size() - paren - 3), 1 << 20);
    }
    if (node < seen + repeat) return static_cast<int>(count);
    seen += static_cast<int>(repeat);
    pos = next + 1;
  }
  throw Error("SLURM_STEP_TASKS_PER_NODE='" + tasks_per_node + "': names no node " + std::to_string(node));
}

Launch launch_from_environment(const Environment& env) {
  auto get = [&env](const char* name) -> std::string {
    const char* v = env(name);
    return v ? std::string(v) : std::string();
  };
  auto number = [&get](const char* name, int64_t max) { return static_cast<int>(whole_number(name, get(name), max)); };
  Launch l;
  if (!get("RANK").empty() || !get("WORLD_SIZE").empty()) {
    // torchrun and the launchers that follow it (Lightning, accelerate, a hand-written script).
    for (const char* name : {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"})
      if (get(name).empty()) throw Error(std::string("environment variable ") + name + " is not set (a data-parallel launch sets RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT)");
    l.launcher = "torchrun";
    l.rank = number("RANK", 1 << 20);
    l.world_size = number("WORLD_SIZE", 1 << 20);
    l.master_addr = get("MASTER_ADDR");
    l.master_port = number("MASTER_PORT", 65535);
    l.local_rank = get("LOCAL_RANK").empty() ? l.rank : number("LOCAL_RANK", 1 << 20);
    // Without LOCAL_WORLD_SIZE a run whose store is on this host is taken to be all here.
    l.local_world_size = !get("LOCAL_WORLD_SIZE").empty() ? number("LOCAL_WORLD_SIZE", 1 << 20)
                         : is_loopback(l.master_addr)    ? l.world_size
                                                          : 1;
  } else if (!get("SLURM_STEP_NUM_TASKS").empty() && !get("SLURM_PROCID").empty()) {
    // A step started by srun. The batch script itself also has SLURM_PROCID (0) and
    // SLURM_NTASKS, but is one process: only srun's step variables make a data-parallel run.
    l.launcher = "slurm";
    l.rank = number("SLURM_PROCID", 1 << 20);
    l.world_size = number("SLURM_STEP_NUM_TASKS", 1 << 20);
    l.local_rank = get("SLURM_LOCALID").empty() ? 0 : number("SLURM_LOCALID", 1 << 20);
    const std::string per_node = get("SLURM_STEP_TASKS_PER_NODE");
    const int node = get("SLURM_NODEID").empty() ? 0 : number("SLURM_NODEID", 1 << 20);
    l.local_world_size = per_node.empty() ? 1 : tasks_on_node(per_node, node);
    std::string nodes = get("SLURM_STEP_NODELIST");
    if (nodes.empty()) nodes = get("SLURM_JOB_NODELIST");
    l.master_addr = !get("MASTER_ADDR").empty() ? get("MASTER_ADDR") : nodes.empty() ? "127.0.0.1" : first_host(nodes);
    if (!get("MASTER_PORT").empty()) {
      l.master_port = number("MASTER_PORT", 65535);
    } else {
      // One port per job and step, the same on every rank, away from the ephemeral range.
      const int64_t job = get("SLURM_JOB_ID").empty() ? 0 : whole_number("SLURM_JOB_ID", get("SLURM_JOB_ID"), INT64_C(1) << 40);
      const int64_t step = get("SLURM_STEP_ID").empty() ? 0 : whole_number("SLURM_STEP_ID", get("SLURM_STEP_ID"), INT64_C(1) << 40);
      l.master_port = static_cast<int>(20000 + (job * 16 + step) % 12000);
    }
  } else {
    return l;
  }
  if (l.world_size < 1) throw Error("the world size is 0 (" + l.launcher + "'s environment)");
  if (l.rank >= l.world_size)
    throw Error("rank " + std::to_string(l.rank) + " is not below the world size " + std::to_string(l.world_size));
  if (l.local_world_size < 1 || l.local_rank >= l.local_world_size)
    throw Error("local rank " + std::to_string(l.local_rank) + " is not below the ranks on this host (" +
                std::to_string(l.local_world_size) + ")");
  if (l.master_port < 1) throw Error("MASTER_PORT must lie in 1..65535");
  return l;
}

int default_threads(const Launch& launch) {
  const int all = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  int cores = all;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) cores = CPU_COUNT(&set);
  // A launcher that binds each task to its own cores (SLURM's task/affinity) has already
  // divided them; one that binds nothing leaves the ranks of a host to share them all.
  if (cores < all) return cores;
  return std::max(1, cores / std::max(1, launch.local_world_size));
}

int default_thread_count() {
  Launch launch;
  try {
    launch = launch_from_environment();
  } catch (const Error&) {
  }
  return default_threads(launch);
}

}  // namespace looplab
