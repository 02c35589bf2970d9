// The version every binary's --version prints: the CMake project version,
// and `git describe` of the checkout it was built from ("" when the build
// found no git checkout). Written at build time by cmake/Version.cmake.
#pragma once

namespace vkamp::app {

extern const char kVersion[];      // "0.3.0"
extern const char kGitDescribe[];  // "3402eda-dirty", "v0.3.0-12-gabcdef1" or ""

}  // namespace vkamp::app
