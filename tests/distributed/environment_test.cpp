// The launcher's environment (distributed/environment.h): torchrun's and srun's variables, the
// SLURM host and task lists, and a clear error for each malformed value.
#include "looplab/distributed/environment.h"

#include <gtest/gtest.h>

#include <map>

#include "looplab/util/error.h"

namespace looplab {
namespace {

Launch launch(const std::map<std::string, std::string>& vars) {
  return launch_from_environment([&vars](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

std::string error_of(const std::map<std::string, std::string>& vars) {
  try {
    launch(vars);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Environment, NothingSetIsOneProcess) {
  const Launch l = launch({});
  EXPECT_FALSE(l.distributed());
  EXPECT_EQ(l.world_size, 1);
  EXPECT_EQ(l.launcher, "none");
}

TEST(Environment, Torchrun) {
  const Launch l = launch({{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "2"},
                           {"MASTER_ADDR", "node7"}, {"MASTER_PORT", "29400"}});
  EXPECT_TRUE(l.distributed());
  EXPECT_EQ(l.launcher, "torchrun");
  EXPECT_EQ(l.rank, 3);
  EXPECT_EQ(l.world_size, 4);
  EXPECT_EQ(l.local_rank, 1);
  EXPECT_EQ(l.local_world_size, 2);
  EXPECT_EQ(l.master_addr, "node7");
  EXPECT_EQ(l.master_port, 29400);
  // Without LOCAL_*: a loopback store means every rank is on this host.
  const Launch here = launch({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "1"}});
  EXPECT_EQ(here.local_rank, 1);
  EXPECT_EQ(here.local_world_size, 2);
  const Launch far = launch({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "10.0.0.1"}, {"MASTER_PORT", "1"}});
  EXPECT_EQ(far.local_world_size, 1);
}

TEST(Environment, Srun) {
  const Launch l = launch({{"SLURM_PROCID", "5"}, {"SLURM_STEP_NUM_TASKS", "8"}, {"SLURM_LOCALID", "1"},
                           {"SLURM_NODEID", "2"}, {"SLURM_STEP_TASKS_PER_NODE", "2(x2),3,1"},
                           {"SLURM_STEP_NODELIST", "gpu[07-09,12],cpu1"}, {"SLURM_JOB_ID", "1234"}, {"SLURM_STEP_ID", "0"}});
  EXPECT_EQ(l.launcher, "slurm");
  EXPECT_EQ(l.rank, 5);
  EXPECT_EQ(l.world_size, 8);
  EXPECT_EQ(l.local_rank, 1);
  EXPECT_EQ(l.local_world_size, 3);  // node 2 runs 3 tasks
  EXPECT_EQ(l.master_addr, "gpu07");
  EXPECT_EQ(l.master_port, 20000 + (1234 * 16) % 12000);
  // MASTER_ADDR and MASTER_PORT, where set, win.
  const Launch set = launch({{"SLURM_PROCID", "0"}, {"SLURM_STEP_NUM_TASKS", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "7"}});
  EXPECT_EQ(set.master_addr, "h");
  EXPECT_EQ(set.master_port, 7);
}

TEST(Environment, ABatchScriptIsOneProcess) {
  // sbatch -n 2 runs its script once, with SLURM_PROCID=0 and SLURM_NTASKS=2 but no step.
  EXPECT_FALSE(launch({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_JOB_ID", "9"}}).distributed());
}

TEST(Environment, HostAndTaskLists) {
  EXPECT_EQ(first_host("vm"), "vm");
  EXPECT_EQ(first_host("a,b"), "a");
  EXPECT_EQ(first_host("node[03-05,9],gpu1"), "node03");
  EXPECT_EQ(first_host("x1,node[2-3]"), "x1");
  EXPECT_EQ(first_host("n[4]"), "n4");
  EXPECT_THROW(first_host("n[]"), Error);
  EXPECT_EQ(tasks_on_node("4", 0), 4);
  EXPECT_EQ(tasks_on_node("2(x3),1", 2), 2);
  EXPECT_EQ(tasks_on_node("2(x3),1", 3), 1);
  EXPECT_THROW(tasks_on_node("2(x3),1", 4), Error);
  EXPECT_THROW(tasks_on_node("2(x3", 0), Error);
}

TEST(Environment, ClearErrors) {
  EXPECT_EQ(error_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}}),
            "environment variable MASTER_PORT is not set (a data-parallel launch sets RANK, WORLD_SIZE, MASTER_ADDR and "
            "MASTER_PORT)");
  EXPECT_EQ(error_of({{"RANK", "x"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}}),
            "environment variable RANK='x': expected a whole number");
  EXPECT_EQ(error_of({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}}),
            "rank 2 is not below the world size 2");
  EXPECT_EQ(error_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "70000"}}),
            "environment variable MASTER_PORT=70000: at most 65535");
  EXPECT_EQ(error_of({{"RANK", "0"}, {"WORLD_SIZE", "0"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}}),
            "the world size is 0 (torchrun's environment)");
  EXPECT_EQ(error_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "2"}, {"LOCAL_WORLD_SIZE", "2"},
                      {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}}),
            "local rank 2 is not below the ranks on this host (2)");
}

TEST(Environment, ThreadsAreSharedByTheRanksOfAHost) {
  Launch one;
  Launch two;
  two.world_size = two.local_world_size = 2;
  EXPECT_GE(default_threads(one), 1);
  EXPECT_EQ(default_threads(two), std::max(1, default_threads(one) / 2));
}

}  // namespace
}  // namespace looplab
