// libFuzzer target for the IDX reader. read_idx takes a path (it streams
// plain or gzip files), so each input is written to two files of this
// process, one plain and one named .gz (zlib reads non-gzip bytes through
// as they are, gzip ones inflated): both paths of the reader see every
// input. Anything but a DataError is a bug.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "vkamp/train/dataset.hpp"

namespace {

std::string scratch_path(const char* suffix) {
  const char* tmp = std::getenv("TMPDIR");
  return std::string(tmp && *tmp ? tmp : "/tmp") + "/vkamp-fuzz-idx-" + std::to_string(::getpid()) + suffix;
}

void write_file(const std::string& path, const uint8_t* data, size_t size) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(data, 1, size, f) != size || std::fclose(f) != 0) std::abort();  // the harness, not the reader
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string plain = scratch_path(""), gz = scratch_path(".gz");
  for (const std::string& path : {plain, gz}) {
    write_file(path, data, size);
    try {
      (void)vkamp::train::read_idx(path);
    } catch (const vkamp::train::DataError&) {
      // A clear error is the right answer to a bad file.
    } catch (const std::exception&) {
      std::abort();  // anything else is a bug the fuzzer should report
    }
    std::remove(path.c_str());
  }
  return 0;
}
