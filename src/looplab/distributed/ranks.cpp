#include "looplab/distributed/ranks.h"

#include <atomic>
#include <cstdio>
#include <functional>
#include <future>
#include <optional>
#include <thread>

#include <torch/version.h>

#include "looplab/distributed/environment.h"
#include "looplab/util/error.h"

// c10d's headers ask for these macros; CMake defines LOOPLAB_HAVE_GLOO where Gloo's headers
// exist (Debian: libgloo-dev) and LOOPLAB_HAVE_NCCL for a CUDA LibTorch built with NCCL.
#if defined(LOOPLAB_HAVE_GLOO)
#define USE_C10D_GLOO 1
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#endif
#if defined(LOOPLAB_HAVE_NCCL)
#define USE_C10D_NCCL 1
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace looplab {

namespace {

std::string alive_key(int rank) { return "looplab/alive/" + std::to_string(rank); }

constexpr auto kBeat = std::chrono::milliseconds(250);
// A heartbeat that has not moved for this long is a lost rank: many beats, so a busy machine
// does not make a live rank look dead.
constexpr auto kSilence = std::chrono::milliseconds(2500);
// DDP's default bucket size.
constexpr int64_t kBucketBytes = 25 << 20;

// The first line of an exception's message: LibTorch's own errors carry a C++ backtrace.
std::string reason(const std::exception& e) {
  const auto* c10 = dynamic_cast<const c10::Error*>(&e);
  const std::string what = c10 ? c10->what_without_backtrace() : e.what();
  return what.substr(0, what.find('\n'));
}

// Runs fn on a thread of its own and waits for it at most `limit`: nothing when it has not
// returned by then (it is left behind, holding what it captured), else its value or its
// exception. LibTorch 2's TCPStore client waits in recv() without end when the server's process
// hangs (SIGSTOP of rank 0), where 1.13's gave up after the store's timeout.
template <typename T>
std::optional<T> within(std::chrono::milliseconds limit, std::function<T()> fn) {
  auto task = std::make_shared<std::packaged_task<T()>>(std::move(fn));
  std::future<T> result = task->get_future();
  std::thread([task] { (*task)(); }).detach();
  if (result.wait_for(limit) != std::future_status::ready) return std::nullopt;
  return result.get();
}

}  // namespace

#if defined(LOOPLAB_HAVE_GLOO)

// LibTorch 2 made the process groups "backends" of a wrapping ProcessGroup; either base class
// has the collectives used here.
#if TORCH_VERSION_MAJOR >= 2
using Collectives = c10d::Backend;
#else
using Collectives = c10d::ProcessGroup;
#endif

// The heartbeat's own state, shared with its thread: a thread blocked on a store that stopped
// answering (rank 0 hangs) is left behind at exit rather than waited for.
struct Heartbeat {
  c10::intrusive_ptr<c10d::TCPStore> store;  // its own client: TCPStore clients are not shared between threads
  std::atomic<bool> stop{false}, ended{false};
};

struct Ranks::Group {
  c10::intrusive_ptr<c10d::TCPStore> store;  // rank 0 hosts it
  c10::intrusive_ptr<Collectives> backend;
  std::shared_ptr<Heartbeat> heartbeat = std::make_shared<Heartbeat>();

  ~Group() {
    heartbeat->stop = true;
    // It ends within one beat unless it is stuck on the store; then it is not waited for.
    for (int i = 0; i < 20 && !heartbeat->ended; ++i) std::this_thread::sleep_for(kBeat / 4);
  }
};

#else

struct Ranks::Group {};

#endif

Ranks::Ranks() = default;
Ranks::~Ranks() = default;

std::unique_ptr<Ranks> Ranks::join_launched(torch::Device device, double timeout_seconds) {
  return join(launch_from_environment(), device, std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000)));
}

std::unique_ptr<Ranks> Ranks::join(const Launch& launch, torch::Device device, std::chrono::milliseconds timeout) {
  auto r = std::make_unique<Ranks>();
  if (!launch.distributed()) return r;
  r->launch_ = launch;
  r->timeout_ = timeout;
  device = r->device_for(device);
#if !defined(LOOPLAB_HAVE_GLOO)
  (void)device;
  throw Error("this looplab was built without c10d's Gloo (install libgloo-dev and build again): it cannot train on " +
              std::to_string(launch.world_size) + " ranks");
#else
  const std::string where = launch.master_addr + ":" + std::to_string(launch.master_port);
  const std::string cannot_meet = "rank " + std::to_string(launch.rank) + " of " + std::to_string(launch.world_size) +
                                  ": cannot meet the other ranks at " + where + " within " +
                                  std::to_string(timeout.count() / 1000) + " s (" +
                                  (launch.rank == 0 ? "not every rank came" : "is rank 0 running?") + "): ";
  auto g = std::make_unique<Group>();
  try {
    c10d::TCPStoreOptions opts;
    opts.port = static_cast<uint16_t>(launch.master_port);
    opts.isServer = launch.rank == 0;
    opts.numWorkers = launch.world_size;
    opts.waitWorkers = true;
    opts.timeout = timeout;
    g->store = c10::make_intrusive<c10d::TCPStore>(launch.master_addr, opts);
    c10d::TCPStoreOptions beat;
    beat.port = opts.port;
    beat.waitWorkers = false;
    beat.timeout = timeout;
    g->heartbeat->store = c10::make_intrusive<c10d::TCPStore>(launch.master_addr, beat);
  } catch (const std::exception& e) {
    throw LostRank(cannot_meet + reason(e));
  }
  std::thread([beat = g->heartbeat, rank = launch.rank] {
    while (!beat->stop) {
      try {
        beat->store->add(alive_key(rank), 1);
      } catch (const std::exception&) {
        break;  // the store is gone (rank 0 ended): nothing left to tell
      }
      std::this_thread::sleep_for(kBeat);
    }
    beat->ended = true;
  }).detach();
  auto prefixed = c10::make_intrusive<c10d::PrefixStore>("c10d", g->store);
  try {
    if (device.is_cuda()) {
#if defined(LOOPLAB_HAVE_NCCL)
      auto options = c10d::ProcessGroupNCCL::Options::create();
      options->timeout = timeout;
      g->backend = c10::make_intrusive<c10d::ProcessGroupNCCL>(prefixed, launch.rank, launch.world_size, options);
      r->backend_ = "nccl";
#endif
    }
    if (!g->backend) {
      // Gloo also reduces CUDA tensors (through the host) where NCCL is not built in.
      auto options = c10d::ProcessGroupGloo::Options::create(timeout);
      const bool loopback = launch.master_addr == "localhost" || launch.master_addr.rfind("127.", 0) == 0;
      if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"))
        options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
      else if (loopback)
        options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
      else
        options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
      options->threads = 2;
      g->backend = c10::make_intrusive<c10d::ProcessGroupGloo>(prefixed, launch.rank, launch.world_size, options);
      r->backend_ = "gloo";
    }
  } catch (const std::exception& e) {
    throw LostRank(cannot_meet + reason(e));
  }
  r->group_ = std::move(g);
  return r;
#endif
}

torch::Device Ranks::device_for(torch::Device device) const {
  if (!device.is_cuda() || device.has_index() || size() == 1) return device;
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(launch_.local_rank));
}

std::pair<int64_t, int64_t> Ranks::part(int64_t begin, int64_t end) const {
  const int64_t n = end - begin, r = rank(), s = size();
  return {begin + n * r / s, begin + n * (r + 1) / s};
}

#if defined(LOOPLAB_HAVE_GLOO)

void Ranks::lost(const std::string& during, const std::exception& cause) const {
  // Which heartbeats stand still? Two readings kSilence apart.
  std::string who;
  const std::string store_at = launch_.master_addr + ":" + std::to_string(launch_.master_port);
  try {
    const std::optional<std::string> stopped =
        within<std::string>(timeout_ + kSilence, [store = group_->store, n = size(), me = rank()] {
          auto count = [&store](int r) { return store->add(alive_key(r), 0); };
          std::vector<int64_t> before(static_cast<size_t>(n));
          for (int r = 0; r < n; ++r) before[static_cast<size_t>(r)] = count(r);
          std::this_thread::sleep_for(kSilence);
          std::string ranks;
          for (int r = 0; r < n; ++r)
            if (r != me && count(r) == before[static_cast<size_t>(r)]) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
          return ranks;
        });
    if (!stopped)
      who = "lost rank 0 (the rendezvous store on " + store_at + " does not answer: the process hangs)";
    else
      who = stopped->empty() ? "no rank stopped beating: one is stuck but alive, or the network failed"
                             : "lost rank " + *stopped + " (its heartbeat stopped: the process died or hangs)";
  } catch (const std::exception&) {
    who = "lost rank 0 (the rendezvous store on " + store_at + " is gone with it)";
  }
  throw LostRank("rank " + std::to_string(rank()) + " of " + std::to_string(size()) + ": " + who + ", during " + during +
              " [" + backend_ + ": " + reason(cause) + "]");
}

namespace {

void wait_all(std::vector<c10::intrusive_ptr<c10d::Work>>& works) {
  for (auto& w : works) w->wait();
}

}  // namespace

void Ranks::sum_gradients(const std::vector<torch::Tensor>& parameters, double weight, std::vector<double>& sums) {
  if (!group_) return;
  torch::NoGradGuard no_grad;
  // Buckets of gradients of one dtype, flattened; half-width floats are reduced in float32.
  struct Bucket {
    std::vector<torch::Tensor> grads;
    torch::Tensor flat;
  };
  std::vector<Bucket> buckets;
  int64_t bytes = kBucketBytes;
  for (const torch::Tensor& p : parameters) {
    const torch::Tensor& g = p.grad();
    if (!g.defined()) continue;
    if (buckets.empty() || bytes + g.numel() * 4 > kBucketBytes || buckets.back().grads.front().scalar_type() != g.scalar_type()) {
      buckets.emplace_back();
      bytes = 0;
    }
    buckets.back().grads.push_back(g);
    bytes += g.numel() * 4;
  }
  std::vector<c10::intrusive_ptr<c10d::Work>> works;
  std::vector<torch::Tensor> sum_tensor{torch::tensor(sums, torch::kFloat64)};
  try {
    for (Bucket& b : buckets) {
      std::vector<torch::Tensor> flat_parts;
      for (const torch::Tensor& g : b.grads) flat_parts.push_back(g.reshape({-1}));
      b.flat = torch::cat(flat_parts);
      if (b.flat.scalar_type() == torch::kBFloat16 || b.flat.scalar_type() == torch::kHalf) b.flat = b.flat.to(torch::kFloat32);
      b.flat.mul_(weight);
      std::vector<torch::Tensor> one{b.flat};
      works.push_back(group_->backend->allreduce(one));
    }
    works.push_back(group_->backend->allreduce(sum_tensor));
    wait_all(works);
  } catch (const std::exception& e) {
    lost("the gradient all-reduce", e);
  }
  for (Bucket& b : buckets) {
    int64_t offset = 0;
    for (torch::Tensor g : b.grads) {
      g.copy_(b.flat.narrow(0, offset, g.numel()).view_as(g));
      offset += g.numel();
    }
  }
  const torch::Tensor s = sum_tensor[0];
  for (size_t i = 0; i < sums.size(); ++i) sums[i] = s[static_cast<int64_t>(i)].item<double>();
}

void Ranks::sum(std::vector<double>& values) {
  if (!group_) return;
  std::vector<torch::Tensor> t{torch::tensor(values, torch::kFloat64)};
  try {
    group_->backend->allreduce(t)->wait();
  } catch (const std::exception& e) {
    lost("a sum over ranks", e);
  }
  for (size_t i = 0; i < values.size(); ++i) values[i] = t[0][static_cast<int64_t>(i)].item<double>();
}

void Ranks::broadcast(std::vector<torch::Tensor> tensors) {
  if (!group_) return;
  torch::NoGradGuard no_grad;
  try {
    std::vector<c10::intrusive_ptr<c10d::Work>> works;
    for (torch::Tensor& t : tensors) {
      std::vector<torch::Tensor> one{t};
      works.push_back(group_->backend->broadcast(one));
    }
    wait_all(works);
  } catch (const std::exception& e) {
    lost("the broadcast of rank 0's weights", e);
  }
}

void Ranks::announce(const std::string& key, const std::string& value) {
  if (!group_ || !leader()) return;
  group_->store->set("looplab/" + key, std::vector<uint8_t>(value.begin(), value.end()));
}

std::string Ranks::await(const std::string& key) {
  if (!group_) return {};
  // Rank 0 may take long (making a task's data); wait as long as its heartbeat goes on.
  int64_t last = -1;
  auto last_change = std::chrono::steady_clock::now();
  while (true) {
    try {
      // One reading: the value if rank 0 has set it, else rank 0's heartbeat count.
      struct Reading {
        std::optional<std::string> value;
        int64_t beats = 0;
      };
      const std::optional<Reading> reading = within<Reading>(timeout_, [store = group_->store, key] {
        Reading r;
        if (store->check({"looplab/" + key})) {
          const std::vector<uint8_t> v = store->get("looplab/" + key);
          r.value = std::string(v.begin(), v.end());
        } else {
          r.beats = store->add(alive_key(0), 0);
        }
        return r;
      });
      if (!reading) throw Error("the rendezvous store does not answer: the process hangs");
      if (reading->value) return *reading->value;
      const int64_t beats = reading->beats;
      if (beats != last) {
        last = beats;
        last_change = std::chrono::steady_clock::now();
      } else if (std::chrono::steady_clock::now() - last_change > kSilence) {
        throw Error("rank 0's heartbeat stopped");
      }
    } catch (const std::exception& e) {
      throw LostRank("rank " + std::to_string(rank()) + " of " + std::to_string(size()) +
                  ": lost rank 0 while waiting for it to " + key + " (" + reason(e) + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

#else

void Ranks::lost(const std::string&, const std::exception& cause) const { throw LostRank(reason(cause)); }
void Ranks::sum_gradients(const std::vector<torch::Tensor>&, double, std::vector<double>&) {}
void Ranks::sum(std::vector<double>&) {}
void Ranks::broadcast(std::vector<torch::Tensor>) {}
void Ranks::announce(const std::string&, const std::string&) {}
std::string Ranks::await(const std::string&) { return {}; }

#endif

}  // namespace looplab
