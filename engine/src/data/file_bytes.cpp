#include "file_bytes.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>

#include "vkamp/data/data_error.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::data {
namespace {

void refuse_directory(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw DataError("cannot read " + path + ": is a directory");
}

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};

// zlib's text for the stream's error, or errno's for a system error.
std::string gz_error(gzFile f) {
  int code = 0;
  const char* msg = gzerror(f, &code);
  if (code == Z_ERRNO) return std::strerror(errno);
  return msg && *msg ? msg : "unknown error";
}

}  // namespace

std::vector<uint8_t> read_file_bytes(const std::string& path) {
  refuse_directory(path);
  std::ifstream in(vkamp::platform::path_from_utf8(path), std::ios::binary);
  if (!in) throw DataError("cannot open " + path + ": " + std::strerror(errno));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw DataError("cannot read " + path + ": " + std::strerror(errno));
  return bytes;
}

std::vector<uint8_t> read_gzip_bytes(const std::string& path) {
  refuse_directory(path);
  errno = 0;
  std::unique_ptr<gzFile_s, GzCloser> gz(gzopen(path.c_str(), "rb"));
  if (!gz) throw DataError("cannot open " + path + ": " + (errno ? std::strerror(errno) : "out of memory"));
  constexpr size_t kChunk = size_t{1} << 20;
  std::vector<uint8_t> out;
  while (true) {
    const size_t have = out.size();
    out.resize(have + kChunk);
    const int got = gzread(gz.get(), out.data() + have, unsigned(kChunk));
    if (got < 0)
      throw DataError("cannot read " + path + ": corrupt gzip data after " + std::to_string(have) +
                      " inflated bytes (" + gz_error(gz.get()) + ")");
    out.resize(have + size_t(got));
    if (got == 0) {
      // gzread reports a stream cut off mid-way as its end plus an error.
      int code = 0;
      gzerror(gz.get(), &code);
      if (code != Z_OK && code != Z_STREAM_END)
        throw DataError(path + " is truncated: the gzip data ends early, after " + std::to_string(have) +
                        " inflated bytes (" + gz_error(gz.get()) + ")");
      return out;
    }
  }
}

}  // namespace vkamp::data
