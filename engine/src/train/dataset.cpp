// Host-side datasets: IDX files (plain or gzip) and synthetic regression.
//
// read_idx is strict: the header's dims must account for every byte of the
// file. Too few bytes is "truncated"; bytes left over after the data are an
// error too ("trailing data"), since they mean the header does not describe
// the file (a wrong or damaged file), not that something is missing.
#include "vkamp/train/dataset.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <random>

namespace vkamp::train {
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
      : path_(label), mem_(bytes), mem_left_(size) {}
  explicit ByteSource(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw DataError("cannot open " + path + ": " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_, &st) == 0 && S_ISDIR(st.st_mode)) {
      ::close(fd_);
      throw DataError("cannot read " + path + ": is a directory");
    }
    if (!ends_with(path, ".gz") && S_ISREG(st.st_mode)) file_left_ = static_cast<size_t>(st.st_size);
    if (ends_with(path, ".gz")) {
      gz_ = gzdopen(fd_, "rb");  // takes the descriptor over
      if (!gz_) {
        ::close(fd_);
        throw DataError("cannot open " + path + " as gzip");
      }
      fd_ = -1;
      gzbuffer(gz_, 1u << 17);
    }
  }
  ~ByteSource() {
    if (gz_) gzclose(gz_);
    if (fd_ >= 0) ::close(fd_);
  }
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  // The bytes left, where the source knows them (memory, a plain file; not
  // gzip, whose inflated size is only known at its end).
  std::optional<size_t> bytes_left() const {
    if (mem_) return mem_left_;
    return file_left_;
  }

  // Reads up to n bytes; fewer only at the end of the data.
  size_t read(uint8_t* out, size_t n) {
    if (mem_) {
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
        ssize_t r = ::read(fd_, out + got, want);
        if (r < 0) {
          if (errno == EINTR) continue;
          throw DataError("cannot read " + path_ + ": " + std::strerror(errno));
        }
        if (r == 0) break;
        got += static_cast<size_t>(r);
        if (file_left_) *file_left_ -= std::min(*file_left_, static_cast<size_t>(r));
      }
    }
    return got;
  }

 private:
  std::string path_;
  int fd_ = -1;
  gzFile gz_ = nullptr;
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

namespace {
std::string pick_file(const std::string& dir, const std::string& base) {
  const std::string prefix = dir.empty() ? std::string() : (ends_with(dir, "/") ? dir : dir + "/");
  const std::string gz = prefix + base + ".gz";
  const std::string plain = prefix + base;
  struct stat st {};
  if (::stat(gz.c_str(), &st) == 0) return gz;
  if (::stat(plain.c_str(), &st) == 0) return plain;
  throw DataError("cannot find " + gz + " or " + plain +
                  " (Fashion-MNIST; on Debian: apt install dataset-fashion-mnist)");
}
}  // namespace

ClassificationData load_fashion_mnist(const std::string& dir, bool test) {
  const std::string stem = test ? "t10k" : "train";
  const std::string images_path = pick_file(dir, stem + "-images-idx3-ubyte");
  const std::string labels_path = pick_file(dir, stem + "-labels-idx1-ubyte");
  IdxArray images = read_idx(images_path);
  IdxArray labels = read_idx(labels_path);

  if (images.dims.size() != 3)
    throw DataError(images_path + " has " + std::to_string(images.dims.size()) +
                    " dimensions; images must be N x H x W");
  if (labels.dims.size() != 1)
    throw DataError(labels_path + " has " + std::to_string(labels.dims.size()) +
                    " dimensions; labels must be 1-D");
  const uint32_t n = images.dims[0];
  if (labels.dims[0] != n)
    throw DataError(images_path + " holds " + std::to_string(n) + " images but " + labels_path +
                    " holds " + std::to_string(labels.dims[0]) + " labels");
  const uint64_t features = uint64_t{images.dims[1]} * images.dims[2];
  if (features == 0 || features > UINT32_MAX)
    throw DataError(images_path + " has images of " + std::to_string(images.dims[1]) + "x" +
                    std::to_string(images.dims[2]) + " pixels; that is not a usable size");

  constexpr uint32_t kClasses = 10;
  ClassificationData out;
  out.count = n;
  out.features = static_cast<uint32_t>(features);
  out.classes = kClasses;
  out.y.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    if (labels.data[i] >= kClasses)
      throw DataError(labels_path + ": label " + std::to_string(labels.data[i]) + " at index " +
                      std::to_string(i) + " is not below " + std::to_string(kClasses));
    out.y[i] = labels.data[i];
  }
  out.x.resize(images.data.size());
  for (size_t i = 0; i < images.data.size(); ++i) out.x[i] = images.data[i] / 255.f;
  return out;
}

// Draw order, fixed so a seed always gives the same set: w_true[0..features),
// b_true, then per example its features x[i][0..features) and one noise draw
// (taken even when noise = 0, so x does not depend on the noise level). y is
// summed in double, in feature order, then rounded to float once.
RegressionData make_regression(uint32_t count, uint32_t features, uint64_t seed, float noise) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);

  RegressionData d;
  d.count = count;
  d.features = features;
  d.w_true.resize(features);
  for (auto& w : d.w_true) w = static_cast<float>(normal(rng));
  d.b_true = static_cast<float>(unit(rng));
  d.x.resize(size_t{count} * features);
  d.y.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    float* row = d.x.data() + size_t{i} * features;
    double sum = 0.0;
    for (uint32_t j = 0; j < features; ++j) {
      row[j] = static_cast<float>(unit(rng));
      sum += double{row[j]} * double{d.w_true[j]};
    }
    sum += d.b_true;
    sum += double{noise} * normal(rng);
    d.y[i] = static_cast<float>(sum);
  }
  return d;
}

ClassificationData make_classification(uint32_t count, uint32_t features, uint32_t classes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> proj(size_t{features} * classes);
  for (auto& p : proj) p = normal(rng);
  ClassificationData d;
  d.count = count;
  d.features = features;
  d.classes = classes;
  d.x.resize(size_t{count} * features);
  d.y.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    float* row = d.x.data() + size_t{i} * features;
    for (uint32_t j = 0; j < features; ++j) row[j] = static_cast<float>(normal(rng));
    double best = -1e300;
    for (uint32_t c = 0; c < classes; ++c) {
      double s = 0;
      for (uint32_t j = 0; j < features; ++j) s += double{row[j]} * proj[size_t{c} * features + j];
      if (s > best) best = s, d.y[i] = c;
    }
  }
  return d;
}

}  // namespace vkamp::train
