// A fresh directory of the test's own under the system's temporary folder
// (platform::make_temp_dir: unique across processes and ctest -j), removed
// with everything in it at the end of its scope, even where the test took
// away its permissions.
#pragma once
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "vkamp/platform.hpp"

namespace vkamp::test {

struct ScratchDir {
  std::filesystem::path path;
  explicit ScratchDir(const std::string& prefix = "vkamp-test")
      : path(platform::path_from_utf8(platform::make_temp_dir(prefix))) {}
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::permissions(path, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  // The path of `name` in the directory (UTF-8).
  std::string file(const std::string& name) const {
    return platform::utf8_from_path(path / platform::path_from_utf8(name));
  }
  // Writes `bytes` to `name` in the directory; returns its path.
  template <class Bytes>
  std::string write(const std::string& name, const Bytes& bytes) const {
    const std::string p = file(name);
    std::ofstream(platform::path_from_utf8(p), std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    return p;
  }
};

}  // namespace vkamp::test
