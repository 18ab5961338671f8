// The three tasks' CSV readers, plain and zstd (by the file's extension): the first byte picks the
// reader and the compression, the rest is the file. Any bytes are rows or a looplab::Error.
#include "fuzz_common.h"
#include "looplab/tasks/chess/puzzles.h"
#include "looplab/tasks/prefix_sums/prefix_sums.h"
#include "looplab/tasks/sudoku/dataset.h"
#include "looplab/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const int which = data[0] % 3;
  const bool zstd = data[0] & 4, skip_bad = data[0] & 8;
  const std::string path = looplab::fuzz::write_input(data + 1, size - 1, zstd ? ".csv.zst" : ".csv");
  try {
    if (which == 0) {
      (void)looplab::prefix_sums::read_csv(path);
    } else if (which == 1) {
      (void)looplab::sudoku::read_csv(path, skip_bad);
    } else {
      looplab::chess::ReadOptions o;
      o.skip_bad = skip_bad;
      (void)looplab::chess::read_lichess(path, o);
    }
  } catch (const looplab::Error&) {
  }
  return 0;
}
