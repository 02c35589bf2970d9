#include "app/tool_main.hpp"

#include <cstdio>

#include "vkamp/config_error.hpp"
#include "vkamp/data/data_error.hpp"
#include "vkamp/io/safetensors.hpp"
#include "vkamp/train/checkpoint_file.hpp"

namespace vkamp::app {

int exit_status(const std::exception& e) {
  if (dynamic_cast<const ConfigError*>(&e) || dynamic_cast<const data::DataError*>(&e) ||
      dynamic_cast<const train::CheckpointError*>(&e) || dynamic_cast<const io::FormatError*>(&e))
    return 2;
  return 1;
}

int tool_main(const char* name, const std::function<int()>& run) {
  try {
    return run();
  } catch (const std::exception& e) {
    const int status = exit_status(e);
    std::fprintf(stderr, "%s: %s%s\n", name, status == 1 ? "error: " : "", e.what());
    return status;
  }
}

}  // namespace vkamp::app
