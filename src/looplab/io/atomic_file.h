// Files are written to a temporary name beside the target and renamed over it, so a killed
// run leaves either the old file or the new one, never a half-written one.
#pragma once

#include <string>
#include <string_view>

namespace looplab {

// Writes `bytes` to `path` atomically (temporary file, fsync, rename). Throws looplab::Error.
void write_file_atomic(const std::string& path, std::string_view bytes);

// Reads a whole file. Throws looplab::Error naming the file if it is missing or unreadable.
std::string read_file(const std::string& path);

// Creates a directory and its parents if needed. Throws looplab::Error.
void make_directories(const std::string& path);

}  // namespace looplab
