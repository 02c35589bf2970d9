// The directories the tests were compiled with (VKAMP_GOLDEN_DIR="/src/...",
// tests/CMakeLists.txt), unless an environment variable of the same name
// moves one: the test bundle (scripts/bundle.sh) carries copies and its
// runner sets each, so the tests run where the source tree is not.
#pragma once
#include <string>

#include "vkamp/platform.hpp"

namespace vkamp::test {

// Read as UTF-8 (platform::get_env): on Windows getenv gives the ANSI code
// page, and a package unpacked under "Zoë" would name a folder that is not there.
inline std::string test_dir(const char* variable, const char* compiled) {
  const std::string v = platform::get_env(variable).value_or("");
  return v.empty() ? compiled : v;
}

}  // namespace vkamp::test

// VKAMP_TEST_DIR(VKAMP_GOLDEN_DIR): $VKAMP_GOLDEN_DIR, else the compiled path.
#define VKAMP_TEST_DIR(NAME) ::vkamp::test::test_dir(#NAME, NAME)
