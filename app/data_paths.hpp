// Where the samples look for their data when --data is not given. The
// engine's loaders take a directory; choosing one is the application's job.
#pragma once
#include <string>

#include "vkamp/knobs.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::app {

// Debian's dataset-fashion-mnist package installs the IDX files in
// /usr/share/datasets/fashion-mnist (on Windows: datasets\fashion-mnist
// beside the program, platform::shared_data_dir); $VKAMP_FASHION_MNIST_DIR
// names another place (the test bundle carries a copy, scripts/bundle.sh).
inline std::string default_fashion_mnist_dir() {
  return env_text("VKAMP_FASHION_MNIST_DIR").value_or(platform::shared_data_dir() + "/datasets/fashion-mnist");
}

}  // namespace vkamp::app
