#include "looplab/io/line_reader.h"

#include <zstd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "looplab/util/error.h"

namespace looplab {

struct LineReader::State {
  std::string path;
  FILE* file = nullptr;
  ZSTD_DCtx* zstd = nullptr;
  std::vector<char> in;          // compressed bytes read but not yet decoded
  size_t in_pos = 0, in_size = 0;
  size_t last_frame_hint = 0;    // ZSTD_decompressStream's return: 0 at the end of a frame
  std::string buffer;            // decoded text not yet returned
  size_t pos = 0;
  bool eof = false;
  ~State() {
    if (zstd) ZSTD_freeDCtx(zstd);
    if (file) std::fclose(file);
  }
};

LineReader::LineReader(std::unique_ptr<State> state) : s_(std::move(state)) {}
LineReader::LineReader(LineReader&&) noexcept = default;
LineReader& LineReader::operator=(LineReader&&) noexcept = default;
LineReader::~LineReader() = default;

LineReader LineReader::open(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw Error(path + ": no such file");
  if (std::filesystem::is_directory(path, ec)) throw Error(path + ": is a directory, expected a file");
  auto s = std::make_unique<State>();
  s->path = path;
  s->file = std::fopen(path.c_str(), "rb");
  if (!s->file) throw Error(path + ": cannot open: " + std::strerror(errno));
  unsigned char magic[4] = {};
  const size_t got = std::fread(magic, 1, 4, s->file);
  std::rewind(s->file);
  if (got == 4 && magic[0] == 0x28 && magic[1] == 0xB5 && magic[2] == 0x2F && magic[3] == 0xFD) {
    s->zstd = ZSTD_createDCtx();
    s->in.resize(ZSTD_DStreamInSize());
  }
  return LineReader(std::move(s));
}

LineReader LineReader::from_string(std::string text) {
  auto s = std::make_unique<State>();
  s->buffer = std::move(text);
  s->eof = true;
  return LineReader(std::move(s));
}

bool LineReader::compressed() const { return s_->zstd != nullptr; }

// Appends the next chunk of text to the buffer; false when the file is exhausted.
bool LineReader::refill() {
  State& s = *s_;
  if (s.eof) return false;
  // Drop what was returned already, so the buffer stays one chunk long.
  s.buffer.erase(0, s.pos);
  s.pos = 0;
  const size_t chunk = 1 << 20;
  if (!s.zstd) {
    const size_t old = s.buffer.size();
    s.buffer.resize(old + chunk);
    const size_t got = std::fread(&s.buffer[old], 1, chunk, s.file);
    s.buffer.resize(old + got);
    if (got == 0) {
      if (std::ferror(s.file)) throw Error(s.path + ": read error");
      s.eof = true;
      return false;
    }
    return true;
  }
  std::vector<char> out(ZSTD_DStreamOutSize());
  for (;;) {
    if (s.in_pos == s.in_size) {
      s.in_size = std::fread(s.in.data(), 1, s.in.size(), s.file);
      s.in_pos = 0;
      if (s.in_size == 0) {
        if (std::ferror(s.file)) throw Error(s.path + ": read error");
        if (s.last_frame_hint != 0) throw Error(s.path + ": truncated zstd stream");
        s.eof = true;
        return false;
      }
    }
    ZSTD_inBuffer input{s.in.data(), s.in_size, s.in_pos};
    ZSTD_outBuffer output{out.data(), out.size(), 0};
    const size_t r = ZSTD_decompressStream(s.zstd, &output, &input);
    if (ZSTD_isError(r)) throw Error(s.path + ": corrupt zstd stream (" + ZSTD_getErrorName(r) + ")");
    s.in_pos = input.pos;
    s.last_frame_hint = r;
    if (output.pos > 0) {
      s.buffer.append(out.data(), output.pos);
      return true;
    }
  }
}

bool LineReader::next(std::string& line) {
  State& s = *s_;
  for (;;) {
    const size_t nl = s.buffer.find('\n', s.pos);
    if (nl != std::string::npos) {
      line.assign(s.buffer, s.pos, nl - s.pos);
      s.pos = nl + 1;
      break;
    }
    if (!refill()) {
      if (s.pos >= s.buffer.size()) return false;
      line.assign(s.buffer, s.pos, std::string::npos);  // a last line without "\n"
      s.pos = s.buffer.size();
      break;
    }
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return true;
}

}  // namespace looplab
