// The checkpoint container: named binary sections, a CRC-32 over the whole
// file, written atomically (temporary file, fsync, rename, fsync of the
// directory) so a crash never leaves a half-written checkpoint in place.
#pragma once
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace vkamp::train {

struct CheckpointFile {
  std::map<std::string, std::vector<uint8_t>> sections;
};

class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws CheckpointError when the file cannot be written.
void save_checkpoint_file(const std::string& path, const CheckpointFile& ck);
// Throws CheckpointError naming the problem: missing, not a vkamp checkpoint,
// truncated, checksum mismatch, unsupported version.
CheckpointFile load_checkpoint_file(const std::string& path);
// The same for a whole file already in memory (the fuzz target's way in);
// `path` names it in errors.
CheckpointFile parse_checkpoint_file(const uint8_t* bytes, size_t size, const std::string& path);

}  // namespace vkamp::train
