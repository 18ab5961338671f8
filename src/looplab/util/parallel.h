// Independent work items on worker threads, as the puzzle generators need them: each index
// once, in any order, results written by index so the output does not depend on the thread
// count. Written by hand: a few lines on std::thread, where a thread-pool library would add a
// dependency for one loop. No LibTorch here.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace looplab {

// Calls make_worker() once in each of `threads` threads (0: one per core, never more than
// `count`), then the function it returned for indices drawn from [0, count) until none is
// left: per-thread state (an engine process, say) lives in that function. progress(done,
// count) is called from this thread about every 250 ms and once at the end. The first
// exception thrown in a worker stops the others after their current index and is rethrown
// here.
inline void for_each_index(int64_t count, int threads,
                           const std::function<std::function<void(int64_t)>()>& make_worker,
                           const std::function<void(int64_t, int64_t)>& progress = {}) {
  if (count <= 0) {
    if (progress) progress(0, 0);
    return;
  }
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = static_cast<int>(std::min<int64_t>(threads, count));
  std::atomic<int64_t> next{0}, done{0};
  std::atomic<bool> failed{false};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  std::vector<std::thread> workers;
  auto worker = [&] {
    try {
      const std::function<void(int64_t)> work = make_worker();
      for (int64_t i; !failed && (i = next++) < count;) {
        work(i);
        ++done;
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      failed = true;
    }
  };
  // Whatever happens here (a thread that cannot start, a progress callback that throws), the
  // workers are stopped and joined before the exception leaves: a joinable std::thread that is
  // destroyed would terminate the program.
  try {
    for (int t = 0; t < threads; ++t) workers.emplace_back(worker);
    while (progress && done < count && !failed) {
      progress(done, count);
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  } catch (...) {
    failed = true;
    for (auto& w : workers) w.join();
    throw;
  }
  for (auto& w : workers) w.join();
  if (failure) std::rethrow_exception(failure);
  if (progress) progress(count, count);
}

}  // namespace looplab
