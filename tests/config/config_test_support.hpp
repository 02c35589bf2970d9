// What the settings tests share: a fresh directory per test for the YAML
// files it writes, the message of a ConfigError, and the command-line parse.
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "app/cli.hpp"
#include "vkamp/config/train_config.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::config {

namespace fs = std::filesystem;

// The application's options extend TrainConfig with paths, device and
// progress bar; the command line fills them.
using app::CliResult;
using app::common_usage;
using app::RunOptions;

// A fresh directory per test for the YAML files it writes.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("vkamp-cfg-" + std::to_string(vkamp::platform::process_id()) + "-" + info->test_suite_name() + "-" + info->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    fs::path p = path_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  std::string path(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

// The message of the ConfigError that f throws ("" and a failure if none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a ConfigError";
  return "";
}

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << "in: " << (haystack)

inline CliResult parse(std::vector<std::string> args, RunOptions& cfg) {
  args.insert(args.begin(), "train");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return app::parse_command_line(static_cast<int>(args.size()), argv.data(), cfg);
}

inline RunOptions with(const std::string& key, const std::string& value) {
  RunOptions c;
  apply_setting(key, value, c);
  return c;
}

}  // namespace vkamp::config
