// for_each_index: every index exactly once for any thread count, and a worker's exception
// reaches the caller.
#include "looplab/util/parallel.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace looplab {
namespace {

TEST(ForEachIndex, EveryIndexOnceForAnyThreadCount) {
  for (int threads : {0, 1, 3, 50}) {
    std::vector<std::atomic<int>> hits(37);
    int64_t last_done = -1;
    for_each_index(
        37, threads, [&] { return [&](int64_t i) { ++hits[i]; }; },
        [&](int64_t done, int64_t total) {
          EXPECT_EQ(total, 37);
          last_done = done;
        });
    for (const auto& h : hits) EXPECT_EQ(h.load(), 1) << threads << " threads";
    EXPECT_EQ(last_done, 37);
  }
  bool called = false;
  for_each_index(0, 2, [&] { return [&](int64_t) { called = true; }; });
  EXPECT_FALSE(called);
}

TEST(ForEachIndex, AWorkersExceptionReachesTheCaller) {
  std::atomic<int> made{0};
  EXPECT_THROW(for_each_index(1000, 2,
                              [&] {
                                ++made;
                                return [](int64_t i) {
                                  if (i == 5) throw std::runtime_error("index 5");
                                };
                              }),
               std::runtime_error);
  // Per-thread state is made once per thread, and a failing state maker is reported too.
  EXPECT_EQ(made.load(), 2);
  EXPECT_THROW(for_each_index(10, 2, []() -> std::function<void(int64_t)> { throw std::runtime_error("no engine"); }),
               std::runtime_error);
}

}  // namespace
}  // namespace looplab
