// libFuzzer target for the settings-file reader (yaml-cpp, the Cerebras
// layout table and the real rows of TrainConfig): any byte string must
// either apply or raise vkamp::ConfigError, never crash, read out of
// bounds (ASan) or throw anything else (a yaml-cpp exception escaping
// would be one). The bytes go through a file, as --config reads them. The
// replay test (replay_main.cpp) runs the committed corpus
// (tests/fuzz/corpus/config/) through it in every ctest run.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "vkamp/config/train_config.hpp"
#include "vkamp/platform.hpp"
#include "vkamp/platform/files.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path =
      vkamp::platform::temp_dir() + "/vkamp-fuzz-config-" + std::to_string(vkamp::platform::process_id()) + ".yaml";
  std::FILE* f = vkamp::platform::open_file(path, "wb");
  if (!f) std::abort();
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  try {
    vkamp::config::TrainConfig cfg;
    vkamp::config::apply_config_file(path, cfg);
    vkamp::config::validate(cfg);
  } catch (const vkamp::ConfigError&) {
    // A clear error, with its file and line, is the right answer to a bad file.
  }
  // Anything else propagates: libFuzzer reports an uncaught exception as a crash.
  return 0;
}
