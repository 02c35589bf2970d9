// The directories the tests were compiled with (VKAMP_GOLDEN_DIR="/src/...",
// tests/CMakeLists.txt), unless an environment variable of the same name
// moves one: the test bundle (scripts/bundle.sh) carries copies and its
// runner sets each, so the tests run where the source tree is not.
#pragma once
#include <cstdlib>
#include <string>

namespace vkamp::test {

inline std::string test_dir(const char* variable, const char* compiled) {
  const char* v = std::getenv(variable);
  return v && *v ? v : compiled;
}

}  // namespace vkamp::test

// VKAMP_TEST_DIR(VKAMP_GOLDEN_DIR): $VKAMP_GOLDEN_DIR, else the compiled path.
#define VKAMP_TEST_DIR(NAME) ::vkamp::test::test_dir(#NAME, NAME)
