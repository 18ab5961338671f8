#include "looplab/io/atomic_file.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "looplab/util/error.h"

namespace looplab {
namespace {

namespace fs = std::filesystem;

TEST(AtomicFile, WritesReplacesAndLeavesNoTemporary) {
  const fs::path dir = fs::temp_directory_path() / ("looplab_atomic_" + std::to_string(::getpid()));
  make_directories(dir.string());
  const std::string path = (dir / "f.txt").string();
  write_file_atomic(path, "first");
  EXPECT_EQ(read_file(path), "first");
  write_file_atomic(path, std::string("second\0binary", 13));
  EXPECT_EQ(read_file(path), std::string("second\0binary", 13));
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1) << "a temporary file was left behind";
  fs::remove_all(dir);
}

TEST(AtomicFile, ErrorsNameThePath) {
  EXPECT_THROW(write_file_atomic("/nonexistent/dir/f.txt", "x"), Error);
  try {
    read_file("/nonexistent/f.txt");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/f.txt: no such file");
  }
}

}  // namespace
}  // namespace looplab
