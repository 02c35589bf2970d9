// IDX files (plain or gzip), the format of MNIST and Fashion-MNIST.
//
// read_idx is strict: the header's dims must account for every byte of the
// file. Too few bytes is "truncated"; bytes left over after the data are an
// error too ("trailing data"), since they mean the header does not describe
// the file (a wrong or damaged file), not that something is missing.
#include "vkamp/data/idx.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <random>

#include "vkamp/data/data_error.hpp"
#include "vkamp/platform/files.hpp"

namespace vkamp::data {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// gzerror's text for a gzdopen'd stream starts "<fd:N>: "; the file name is
// in our message already.
std::string gz_message(const char* msg) {
  std::string m = msg ? msg : "unknown error";
  if (m.rfind("<fd:", 0) == 0) {
    size_t colon = m.find(">: ");
    if (colon != std::string::npos) m.erase(0, colon + 3);
  }
  return m;
}

std::string hex_byte(unsigned v) {
  static const char* digits = "0123456789abcdef";
  std::string s = "0x";
  s += digits[(v >> 4) & 15];
  s += digits[v & 15];
  return s;
}

// Reads bytes from a plain descriptor, for .gz names through zlib, or from
// a buffer in memory (parse_idx).
class ByteSource {
 public:
  ByteSource(const uint8_t* bytes, size_t size, const std::string& label)
      : path_(label), in_memory_(true), mem_(bytes), mem_left_(size) {}
  explicit ByteSource(const std::string& path) : path_(path) {
    try {
      file_ = std::make_unique<platform::InputFile>(path);
    } catch (const platform::FileError& e) {
      throw DataError("cannot open " + path + ": " + e.reason());
    }
    if (file_->is_directory()) throw DataError("cannot read " + path + ": is a directory");
    if (!ends_with(path, ".gz")) file_left_ = file_->regular_size();
    if (ends_with(path, ".gz")) {
      gz_ = gzdopen(file_->release_descriptor(), "rb");  // takes the descriptor over
      file_.reset();
      if (!gz_) throw DataError("cannot open " + path + " as gzip");
      gzbuffer(gz_, 1u << 17);
    }
  }
  ~ByteSource() {
    if (gz_) gzclose(gz_);
  }
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  // The bytes left, where the source knows them (memory, a plain file; not
  // gzip, whose inflated size is only known at its end).
  std::optional<size_t> bytes_left() const {
    if (in_memory_) return mem_left_;
    return file_left_;
  }

  // Reads up to n bytes; fewer only at the end of the data.
  size_t read(uint8_t* out, size_t n) {
    if (in_memory_) {
      const size_t take = std::min(n, mem_left_);
      if (take) std::memcpy(out, mem_, take);
      mem_ += take;
      mem_left_ -= take;
      return take;
    }
    size_t got = 0;
    while (got < n) {
      size_t want = std::min<size_t>(n - got, size_t{1} << 30);
      if (gz_) {
        int r = gzread(gz_, out + got, static_cast<unsigned>(want));
        if (r < 0) {
          int code = 0;
          const char* msg = gzerror(gz_, &code);
          throw DataError("cannot read " + path_ + ": corrupt or truncated gzip data (" +
                          (code == Z_ERRNO ? std::string(std::strerror(errno)) : gz_message(msg)) +
                          ")");
        }
        if (r == 0) {
          // gzread reports a stream cut off mid-way as end of file plus an error.
          int code = 0;
          const char* msg = gzerror(gz_, &code);
          if (code != Z_OK && code != Z_STREAM_END)
            throw DataError(path_ + " is truncated: gzip data ends early (" + gz_message(msg) + ")");
          break;
        }
        got += static_cast<size_t>(r);
      } else {
        size_t r = 0;
        try {
          r = file_->read(out + got, want);
        } catch (const platform::FileError& e) {
          throw DataError("cannot read " + path_ + ": " + e.reason());
        }
        if (r == 0) break;
        got += r;
        if (file_left_) *file_left_ -= std::min(*file_left_, r);
      }
    }
    return got;
  }

 private:
  std::string path_;
  std::unique_ptr<platform::InputFile> file_;  // a plain file (not gzip, not memory)
  gzFile gz_ = nullptr;
  bool in_memory_ = false;  // parse_idx: even an empty buffer (null data) is memory, not a file
  const uint8_t* mem_ = nullptr;
  size_t mem_left_ = 0;
  std::optional<size_t> file_left_;
};

// `path` names the source in errors: the file, or parse_idx's label.
IdxArray read_idx_from(ByteSource& in, const std::string& path) {

  uint8_t magic[4];
  size_t got = in.read(magic, 4);
  if (got < 4) {
    if (got == 0) throw DataError(path + " is truncated: empty file, not an IDX file");
    throw DataError(path + " is truncated: " + std::to_string(got) + " bytes, shorter than the IDX magic");
  }
  if (magic[0] != 0 || magic[1] != 0)
    throw DataError(path + " is not an IDX file (bad magic " + hex_byte(magic[0]) +
                    hex_byte(magic[1]).substr(2) + hex_byte(magic[2]).substr(2) +
                    hex_byte(magic[3]).substr(2) + ")");
  if (magic[2] != 0x08)
    throw DataError(path + " has IDX type " + hex_byte(magic[2]) +
                    "; only unsigned bytes (0x08) are supported");
  const unsigned ndims = magic[3];
  if (ndims == 0) throw DataError(path + " is not a usable IDX file: it declares 0 dimensions");

  IdxArray out;
  out.dims.resize(ndims);
  std::vector<uint8_t> raw(4 * size_t{ndims});
  got = in.read(raw.data(), raw.size());
  if (got < raw.size())
    throw DataError(path + " is truncated: the header declares " + std::to_string(ndims) +
                    " dimensions but ends after " + std::to_string(got / 4));
  uint64_t total = 1;
  bool overflow = false;
  for (unsigned i = 0; i < ndims; ++i) {
    const uint8_t* b = raw.data() + 4 * i;
    uint32_t d = uint32_t{b[0]} << 24 | uint32_t{b[1]} << 16 | uint32_t{b[2]} << 8 | uint32_t{b[3]};
    out.dims[i] = d;
    if (d != 0 && total > UINT64_MAX / d) overflow = true;
    total *= d;
  }
  // A product of zero wins over an overflow among the other dims.
  if (std::find(out.dims.begin(), out.dims.end(), 0u) != out.dims.end()) {
    total = 0;
    overflow = false;
  }
  if (overflow || total > SIZE_MAX / 2)
    throw DataError(path + " is not a usable IDX file: its dims describe an absurd size");

  const size_t want = static_cast<size_t>(total);
  auto truncated = [&](size_t have) {
    std::string shape;
    for (size_t i = 0; i < out.dims.size(); ++i) shape += (i ? "x" : "") + std::to_string(out.dims[i]);
    return DataError(path + " is truncated: dims " + shape + " need " + std::to_string(want) +
                     " bytes of data, the file has " + std::to_string(have));
  };
  // A source that knows its length is checked before anything is allocated.
  if (std::optional<size_t> left = in.bytes_left(); left && *left < want) throw truncated(*left);
  // Otherwise (gzip) grow the buffer as data actually arrives so a corrupt
  // header cannot make us allocate more than the file holds (plus the last chunk).
  constexpr size_t kChunk = size_t{16} << 20;
  size_t have = 0;
  while (have < want) {
    size_t step = std::min(kChunk, want - have);
    out.data.resize(have + step);
    size_t r = in.read(out.data.data() + have, step);
    have += r;
    if (r < step) break;
  }
  if (have < want) throw truncated(have);
  out.data.resize(want);
  uint8_t extra[256];
  size_t trailing = in.read(extra, sizeof(extra));
  if (trailing > 0)
    throw DataError(path + " has trailing data after the " + std::to_string(want) +
                    " bytes its header describes (a wrong or damaged file)");
  return out;
}

}  // namespace

IdxArray read_idx(const std::string& path) {
  ByteSource in(path);
  return read_idx_from(in, path);
}

IdxArray parse_idx(const uint8_t* bytes, size_t size, const std::string& label) {
  ByteSource in(bytes, size, label);
  return read_idx_from(in, label);
}

}  // namespace vkamp::data
