// The ranks of a data-parallel run (environment.h says who they are): LibTorch's c10d process
// group (Gloo on CPU, NCCL on CUDA where looplab is built with it) behind the few operations
// the training loop needs. A single process is a group of one whose operations do nothing, so
// the loop reads the same either way. A rank that dies or hangs is named in the error the
// others throw: each rank beats a heartbeat into the rendezvous store, and when a collective
// fails the ranks whose heartbeat stopped are the lost ones.
#pragma once

#include <torch/torch.h>

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "looplab/distributed/environment.h"
#include "looplab/util/error.h"

namespace looplab {

// A rank died, hangs or cannot be reached: the message names it.
class LostRank : public Error {
 public:
  using Error::Error;
};

class Ranks {
 public:
  Ranks();  // one process
  ~Ranks();
  Ranks(const Ranks&) = delete;
  Ranks& operator=(const Ranks&) = delete;

  // Joins the launch's ranks (all must call it within `timeout`); `timeout` also bounds every
  // collective, so a hung rank stops the others after it. One process if the launch is not
  // distributed.
  static std::unique_ptr<Ranks> join(const Launch& launch, torch::Device device, std::chrono::milliseconds timeout);
  // join() of the launch this process's environment describes (torchrun's or srun's
  // variables, distributed/environment.h), with the timeout in seconds (`--dist-timeout`).
  static std::unique_ptr<Ranks> join_launched(torch::Device device, double timeout_seconds);

  int rank() const { return launch_.rank; }
  int size() const { return launch_.world_size; }
  bool leader() const { return launch_.rank == 0; }
  const std::string& backend() const { return backend_; }

  // "cuda" without an index means this rank's own GPU, cuda:LOCAL_RANK, on several ranks.
  torch::Device device_for(torch::Device device) const;

  // This rank's part [lo, hi) of the global range [begin, end), split as evenly as it goes.
  std::pair<int64_t, int64_t> part(int64_t begin, int64_t end) const;

  // In place on every rank: each gradient becomes the sum over ranks of weight * gradient (with
  // weight = this rank's share of the batch, the mean of the whole batch), in buckets of
  // ~25 MiB reduced at once; `sums` (small numbers, e.g. the loss) are summed alongside.
  void sum_gradients(const std::vector<torch::Tensor>& parameters, double weight, std::vector<double>& sums);
  void sum(std::vector<double>& values);
  // Rank 0's values of these tensors on every rank.
  void broadcast(std::vector<torch::Tensor> tensors);
  // Rank 0 says `value` under `key`; the others wait for it (watching that rank 0 is alive).
  void announce(const std::string& key, const std::string& value);
  std::string await(const std::string& key);

 private:
  struct Group;
  [[noreturn]] void lost(const std::string& during, const std::exception& cause) const;

  Launch launch_;
  std::string backend_ = "none";
  std::chrono::milliseconds timeout_{0};
  std::unique_ptr<Group> group_;
};

}  // namespace looplab
