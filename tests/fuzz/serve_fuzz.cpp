// The server's path and query handling, without HTTP: a run or sweep name (and a file name)
// under a fixed folder, and an illustration's query. Any input is an answer or an ApiError
// (4xx), never a crash, and never the content of the file planted outside the folders.
#include <filesystem>
#include <fstream>

#include "looplab/serve/api.h"

namespace fs = std::filesystem;

namespace {

const fs::path& root() {
  static const fs::path r = [] {
    const fs::path d = fs::temp_directory_path() / "looplab-serve-fuzz";
    fs::create_directories(d / "runs" / "alpha");
    fs::create_directories(d / "secret");
    std::ofstream(d / "runs" / "alpha" / "config.json") << "{\"task\": \"prefix-sums\"}\n";
    std::ofstream(d / "secret" / "config.json") << "{\"secret\": true}\n";
    return d;
  }();
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const size_t cut = text.find('|');
  const std::string name = text.substr(0, cut), rest = cut == std::string::npos ? "" : text.substr(cut + 1);
  const looplab::serve::Runs runs((root() / "runs").string());
  const looplab::serve::Sweeps sweeps((root() / "runs").string());
  try {
    const std::string body = rest.empty() ? runs.run(name).dump() : runs.file(name, rest);
    if (body.find("\"secret\"") != std::string::npos) __builtin_trap();
  } catch (const looplab::serve::ApiError& e) {
    if (e.status() < 400 || e.status() >= 500) __builtin_trap();
  }
  try {
    (void)sweeps.report(name);
  } catch (const looplab::serve::ApiError&) {
  }
  // name as an illustration, rest as KEY=VALUE&KEY=VALUE
  looplab::serve::Query q;
  size_t start = 0;
  while (start < rest.size()) {
    const size_t amp = rest.find('&', start);
    const std::string kv = rest.substr(start, amp == std::string::npos ? std::string::npos : amp - start);
    const size_t eq = kv.find('=');
    q.emplace(kv.substr(0, eq), eq == std::string::npos ? "" : kv.substr(eq + 1));
    if (amp == std::string::npos) break;
    start = amp + 1;
  }
  try {
    (void)looplab::serve::explore_one(name, q);
  } catch (const looplab::serve::ApiError&) {
  }
  return 0;
}
