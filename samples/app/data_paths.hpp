// Where the samples look for their data when --data is not given. The
// engine's loaders take a directory; choosing one is the application's job.
#pragma once

namespace vkamp::app {

// Debian's dataset-fashion-mnist package installs the IDX files here.
inline const char* kDefaultFashionMnistDir = "/usr/share/datasets/fashion-mnist";

}  // namespace vkamp::app
