// libFuzzer target for the IDX reader: every input goes through parse_idx
// from memory; inputs that start with the gzip magic are also written to a
// .gz file of this process and read with read_idx, so zlib's path through
// the reader is fuzzed too (a file per input would be slow for all of
// them). Anything but a DataError is a bug.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "vkamp/data/data_error.hpp"
#include "vkamp/data/idx.hpp"
#include "vkamp/platform.hpp"

namespace {

template <class Read>
void expect_data_error_at_most(Read&& read) {
  try {
    (void)read();
  } catch (const vkamp::data::DataError&) {
    // A clear error is the right answer to a bad file.
  } catch (const std::exception&) {
    std::abort();  // anything else is a bug the fuzzer should report
  }
}

std::string scratch_gz_path() {
  return vkamp::platform::temp_dir() + "/vkamp-fuzz-idx-" + std::to_string(vkamp::platform::process_id()) + ".gz";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  expect_data_error_at_most([&] { return vkamp::data::parse_idx(data, size, "fuzz.idx"); });
  if (size < 2 || data[0] != 0x1f || data[1] != 0x8b) return 0;
  static const std::string gz = scratch_gz_path();
  FILE* f = std::fopen(gz.c_str(), "wb");
  if (!f || std::fwrite(data, 1, size, f) != size || std::fclose(f) != 0) std::abort();  // the harness, not the reader
  expect_data_error_at_most([&] { return vkamp::data::read_idx(gz); });
  std::remove(gz.c_str());
  return 0;
}
