// libFuzzer target for the checkpoint container. A random input almost never
// carries a right CRC-32, which the reader checks before it returns, so each
// input is parsed twice: as it is, and with its last 4 bytes replaced by the
// CRC of the rest, which takes the fuzzer past the checksum into the
// section walk. Anything but a CheckpointError is a bug.
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <vector>

#include "vkamp/train/checkpoint_file.hpp"

namespace {

void parse(const uint8_t* data, size_t size) {
  try {
    (void)vkamp::train::parse_checkpoint_file(data, size, "fuzz.ckpt");
  } catch (const vkamp::train::CheckpointError&) {
    // A clear error is the right answer to a bad file.
  } catch (const std::exception&) {
    std::abort();  // anything else is a bug the fuzzer should report
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  parse(data, size);
  if (size < 4) return 0;
  std::vector<uint8_t> fixed(data, data + size);
  const uint32_t crc = static_cast<uint32_t>(crc32(crc32(0, nullptr, 0), fixed.data(), static_cast<uInt>(size - 4)));
  for (int i = 0; i < 4; ++i) fixed[size - 4 + i] = static_cast<uint8_t>(crc >> (8 * i));
  parse(fixed.data(), fixed.size());
  return 0;
}
