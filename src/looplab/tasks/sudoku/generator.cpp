#include "looplab/tasks/sudoku/generator.h"

#include "looplab/tasks/sudoku/solver.h"
#include "looplab/util/error.h"
#include "looplab/util/parallel.h"
#include "looplab/util/random.h"

namespace looplab::sudoku {

namespace {

Puzzle minimal_puzzle(Random& rng) {
  Puzzle p;
  p.answer = solve(Grid{}, 1, &rng).solution;
  p.question = p.answer;
  // One pass in random order reaches a minimal puzzle: removing more clues never restores
  // uniqueness, so a clue that had to stay still has to stay at the end.
  for (int64_t cell : rng.permutation(81)) {
    const uint8_t digit = p.question[cell];
    p.question[cell] = 0;
    if (solve(p.question, 2).solutions != 1) p.question[cell] = digit;
  }
  p.rating = rating(p.question);
  return p;
}

}  // namespace

std::vector<Source> default_sources() {
  return {{"looplab-plain", 1, 50}, {"looplab-select8", 8, 25}, {"looplab-select64", 64, 25}};
}

Puzzle generate_puzzle(uint64_t seed, uint64_t index, const std::vector<Source>& sources) {
  int total = 0;
  for (const Source& s : sources) {
    if (s.selection < 1 || s.percent < 0) throw Error("sudoku generator: source '" + s.name + "' has a bad selection or share");
    total += s.percent;
  }
  if (total != 100) throw Error("sudoku generator: the sources' shares sum to " + std::to_string(total) + ", not 100");
  Random rng(Random::stream_seed(seed, index));
  int64_t draw = rng.uniform_int(0, 99);
  size_t k = 0;
  while (draw >= sources[k].percent) draw -= sources[k++].percent;
  Puzzle p = select_puzzle(rng, sources[k].selection);
  p.source = sources[k].name;
  return p;
}

Puzzle select_puzzle(Random& rng, int selection) {
  if (selection < 1) throw Error("sudoku generator: selection must be >= 1");
  Puzzle best = minimal_puzzle(rng);
  for (int k = 1; k < selection; ++k) {
    Puzzle p = minimal_puzzle(rng);
    if (p.rating > best.rating) best = p;
  }
  return best;
}

std::vector<Puzzle> generate(int64_t count, uint64_t seed, const GeneratorOptions& options,
                             const std::function<void(int64_t, int64_t)>& progress) {
  if (count < 0) throw Error("sudoku generator: count must be >= 0");
  generate_puzzle(seed, 0, options.sources);  // checks the sources here, not in a worker thread
  std::vector<Puzzle> out(count);
  for_each_index(
      count, options.threads,
      [&] { return [&](int64_t i) { out[i] = generate_puzzle(seed, static_cast<uint64_t>(i), options.sources); }; },
      progress);
  return out;
}

}  // namespace looplab::sudoku
