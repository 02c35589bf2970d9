// The checkpoint container. Layout, all integers little-endian:
//
//   "VKAMPCK\0"                      8 bytes of magic
//   u32 version                      1
//   u32 section count
//   per section:
//     u32 name length, name bytes
//     u64 payload length, payload bytes
//   u32 CRC-32 (zlib's) of every byte before it
//
// Sections are written in the map's (sorted) order. Saving streams the file
// to "<path>.tmp.<pid>" next to the target, flushes it to disk and moves it
// over the target (platform::ReplacingFile), so a crash leaves either the
// old file or the new one, never half of one. Loading reads the whole file (its real
// size bounds every allocation), walks the sections with every length
// checked against the bytes left, then checks the CRC.
#include "vkamp/train/checkpoint_file.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>

#include "vkamp/platform/files.hpp"

namespace vkamp::train {
namespace {

constexpr char kMagic[8] = {'V', 'K', 'A', 'M', 'P', 'C', 'K', '\0'};
constexpr uint32_t kVersion = 1;
// magic + version + section count
constexpr size_t kHeaderSize = sizeof(kMagic) + 4 + 4;
constexpr size_t kCrcSize = 4;

uint32_t crc_update(uint32_t crc, const uint8_t* p, size_t n) {
  // zlib's crc32 takes a uInt length; feed it in chunks that always fit.
  constexpr size_t kChunk = size_t{1} << 30;
  while (n > 0) {
    size_t take = std::min(n, kChunk);
    crc = static_cast<uint32_t>(crc32(crc, p, static_cast<uInt>(take)));
    p += take;
    n -= take;
  }
  return crc;
}

void put_u32(uint8_t* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
}
void put_u64(uint8_t* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint32_t get_u32(const uint8_t* in) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{in[i]} << (8 * i);
  return v;
}
uint64_t get_u64(const uint8_t* in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{in[i]} << (8 * i);
  return v;
}

// Writes the file, keeping the running CRC.
class CrcWriter {
 public:
  explicit CrcWriter(platform::ReplacingFile& file) : file_(file) {}

  void write(const void* data, size_t n) {
    crc_ = crc_update(crc_, static_cast<const uint8_t*>(data), n);
    write_raw(data, n);
  }
  void write_u32(uint32_t v) {
    uint8_t b[4];
    put_u32(b, v);
    write(b, 4);
  }
  void write_u64(uint64_t v) {
    uint8_t b[8];
    put_u64(b, v);
    write(b, 8);
  }
  // The CRC itself is not part of what it covers.
  void write_crc() {
    uint8_t b[4];
    put_u32(b, crc_);
    write_raw(b, 4);
  }

 private:
  void write_raw(const void* data, size_t n) { file_.write(data, n); }

  platform::ReplacingFile& file_;
  uint32_t crc_ = static_cast<uint32_t>(crc32(0, nullptr, 0));
};

}  // namespace

void save_checkpoint_file(const std::string& path, const CheckpointFile& ck) {
  if (path.empty()) throw CheckpointError("cannot write checkpoint: empty path");
  if (ck.sections.size() > std::numeric_limits<uint32_t>::max())
    throw CheckpointError("cannot write checkpoint " + path + ": too many sections");
  for (const auto& [name, payload] : ck.sections) {
    if (name.size() > std::numeric_limits<uint32_t>::max())
      throw CheckpointError("cannot write checkpoint " + path + ": section name too long");
  }

  try {
    platform::ReplacingFile file(path);
    CrcWriter out(file);
    out.write(kMagic, sizeof(kMagic));
    out.write_u32(kVersion);
    out.write_u32(static_cast<uint32_t>(ck.sections.size()));
    for (const auto& [name, payload] : ck.sections) {
      out.write_u32(static_cast<uint32_t>(name.size()));
      out.write(name.data(), name.size());
      out.write_u64(payload.size());
      out.write(payload.data(), payload.size());
    }
    out.write_crc();
    file.commit();
  } catch (const platform::FileError& e) {
    throw CheckpointError("cannot write checkpoint " + path + ": " + e.what());
  }
}

// The whole file: its real size bounds everything the parser allocates.
static std::vector<uint8_t> read_whole_file(const std::string& path) {
  std::unique_ptr<platform::InputFile> file;
  try {
    file = std::make_unique<platform::InputFile>(path);
  } catch (const platform::FileError& e) {
    throw CheckpointError("cannot open checkpoint " + path + ": " + e.reason());
  }
  if (!file->regular_size()) throw CheckpointError("cannot read checkpoint " + path + ": not a regular file");
  std::vector<uint8_t> bytes(static_cast<size_t>(*file->regular_size()));
  try {
    bytes.resize(file->read(bytes.data(), bytes.size()));  // shorter if it shrank while we read it
  } catch (const platform::FileError& e) {
    throw CheckpointError("cannot read checkpoint " + path + ": " + e.reason());
  }
  return bytes;
}

CheckpointFile load_checkpoint_file(const std::string& path) {
  const std::vector<uint8_t> bytes = read_whole_file(path);
  return parse_checkpoint_file(bytes.data(), bytes.size(), path);
}

CheckpointFile parse_checkpoint_file(const uint8_t* data, size_t size, const std::string& path) {
  const std::string where = "checkpoint " + path;

  // Magic. A file shorter than the magic is truncated when what is there
  // matches its beginning, and not a checkpoint otherwise.
  if (size < sizeof(kMagic)) {
    if (size == 0 || std::memcmp(kMagic, data, size) == 0)  // an empty file counts as truncated
      throw CheckpointError(where + " is truncated: " + std::to_string(size) +
                            " bytes, shorter than the header");
    throw CheckpointError(where + " is not a vkamp checkpoint (bad magic)");
  }
  if (std::memcmp(data, kMagic, sizeof(kMagic)) != 0)
    throw CheckpointError(where + " is not a vkamp checkpoint (bad magic)");
  if (size < kHeaderSize + kCrcSize)
    throw CheckpointError(where + " is truncated: " + std::to_string(size) +
                          " bytes, shorter than the header and checksum (" +
                          std::to_string(kHeaderSize + kCrcSize) + ")");

  const size_t body = size - kCrcSize;  // bytes covered by the CRC
  const uint32_t stored_crc = get_u32(data + body);
  const bool crc_ok = crc_update(static_cast<uint32_t>(crc32(0, nullptr, 0)), data, body) == stored_crc;

  const uint32_t version = get_u32(data + 8);
  if (version != kVersion) {
    if (crc_ok)
      throw CheckpointError(where + " has unsupported version " + std::to_string(version) +
                            " (this build reads version " + std::to_string(kVersion) + ")");
    throw CheckpointError(where + " is corrupt: checksum mismatch (its version field reads " +
                          std::to_string(version) + ", this build reads version " +
                          std::to_string(kVersion) + ")");
  }
  const uint32_t count = get_u32(data + 12);

  // Walk the sections. Every length is checked against the bytes left before
  // anything is allocated, and with no arithmetic that could overflow. A
  // length that runs past the end is what a cut-off file looks like (or a
  // damaged length field: the CRC cannot tell which, since it fails either way).
  auto truncated = [&](const std::string& what, size_t at, uint64_t need) {
    return CheckpointError(where + " is truncated (or corrupt): " + what + " needs " +
                           std::to_string(need) + " bytes at offset " + std::to_string(at) +
                           " but the file has " + std::to_string(size) + " bytes" +
                           (crc_ok ? "" : ", checksum mismatch"));
  };
  CheckpointFile ck;
  size_t pos = kHeaderSize;
  for (uint32_t i = 0; i < count; ++i) {
    const std::string which = "section " + std::to_string(i) + " of " + std::to_string(count);
    if (body - pos < 4) throw truncated(which + " name length", pos, 4);
    const uint32_t name_len = get_u32(data + pos);
    pos += 4;
    if (body - pos < name_len) throw truncated(which + " name", pos, name_len);
    std::string name(reinterpret_cast<const char*>(data + pos), name_len);
    pos += name_len;
    if (body - pos < 8) throw truncated("section '" + name + "' payload length", pos, 8);
    const uint64_t payload_len = get_u64(data + pos);
    pos += 8;
    if (body - pos < payload_len) throw truncated("section '" + name + "' payload", pos, payload_len);
    const uint8_t* payload = data + pos;
    pos += payload_len;
    if (!crc_ok) continue;  // reported below; do not copy data we will not return
    if (ck.sections.count(name))
      throw CheckpointError(where + " is corrupt: section '" + name + "' appears twice");
    ck.sections.emplace(std::move(name), std::vector<uint8_t>(payload, payload + payload_len));
  }
  if (!crc_ok) throw CheckpointError(where + " is corrupt: checksum mismatch");
  if (pos != body)
    throw CheckpointError(where + " is corrupt: " + std::to_string(body - pos) +
                          " unexpected bytes after the last section");
  return ck;
}

}  // namespace vkamp::train
