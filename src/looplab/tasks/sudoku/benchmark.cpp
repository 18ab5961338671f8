#include "looplab/tasks/sudoku/benchmark.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <thread>
#include <utility>

#include "looplab/tasks/sudoku/dataset.h"
#include "looplab/tasks/sudoku/generator.h"
#include "looplab/tasks/sudoku/solver.h"
#include "looplab/util/error.h"

namespace looplab::sudoku {

void run_benchmark(int64_t count, uint64_t seed, int threads) {
  if (count < 10) throw Error("--count must be >= 10");
  using clock = std::chrono::steady_clock;
  auto seconds_since = [](clock::time_point t) { return std::chrono::duration<double>(clock::now() - t).count(); };
  GeneratorOptions all;
  all.threads = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  auto start = clock::now();
  const auto puzzles = generate(count, seed, all);
  const double t_all = seconds_since(start);
  GeneratorOptions one;
  one.threads = 1;
  const int64_t few = std::max<int64_t>(count / 4, 10);
  start = clock::now();
  const auto check = generate(few, seed, one);
  const double t_one = seconds_since(start);
  for (int64_t i = 0; i < few; ++i)
    if (check[i].question != puzzles[i].question) throw Error("generation differs between thread counts");
  const double rate_all = static_cast<double>(count) / t_all, rate_one = static_cast<double>(few) / t_one;
  std::printf("generation: %.1f puzzles/s on %d threads, %.1f on 1 thread (x%.2f); 60,000 puzzles take %.1f min\n",
              rate_all, all.threads, rate_one, rate_all / rate_one, 60000 / rate_all / 60);
  const RatingSplit bands = split_by_rating(puzzles);
  for (const auto& [name, band] : {std::pair{"easy", bands.easy}, std::pair{"hard", bands.hard}}) {
    int64_t solved = 0, backtracks = 0;
    start = clock::now();
    do {
      for (int64_t i : band) {
        const auto r = solve(puzzles[i].question, 2);
        solved += r.solutions == 1;
        backtracks += r.backtracks;
      }
    } while (seconds_since(start) < 0.5);
    std::printf("solving %s band (%zu puzzles): %.0f puzzles/s on 1 thread, mean %.1f backtracks\n", name,
                band.size(), static_cast<double>(solved) / seconds_since(start),
                static_cast<double>(backtracks) / static_cast<double>(solved));
  }
  std::cout << rating_report(puzzles);
}

}  // namespace looplab::sudoku
