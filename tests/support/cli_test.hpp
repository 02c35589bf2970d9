// What the tests of command-line programs share: a fresh temporary
// directory per test, and the check that bad input was rejected the way a
// user should see it (exit status 2, a message naming the problem, no
// validation-layer message).
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/child_process.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::test {

inline ::testing::AssertionResult rejected(const ChildResult& r, const std::string& must_mention) {
  if (r.status != 2) return ::testing::AssertionFailure() << "exit status " << r.status << ", output:\n" << r.output;
  if (r.output.find(must_mention) == std::string::npos)
    return ::testing::AssertionFailure() << "message does not mention \"" << must_mention << "\":\n" << r.output;
  if (r.output.find("validation") != std::string::npos)
    return ::testing::AssertionFailure() << "validation layer message:\n" << r.output;
  return ::testing::AssertionSuccess();
}

// A directory named after the process and the test, removed afterwards.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("vkamp-" + std::to_string(vkamp::platform::process_id()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const char* name) const {
    return platform::utf8_from_path(dir_ / platform::path_from_utf8(name));
  }
  std::filesystem::path dir_;
};

}  // namespace vkamp::test
