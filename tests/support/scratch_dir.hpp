// A fresh directory of the test's own under the system's temporary folder
// (mkdtemp: unique across processes and ctest -j), removed with everything
// in it at the end of its scope, even where the test took away its
// permissions.
#pragma once
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>

namespace vkamp::test {

struct ScratchDir {
  std::filesystem::path path;
  explicit ScratchDir(const std::string& prefix = "vkamp-test") {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::permissions(path, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  // The path of `name` in the directory.
  std::string file(const std::string& name) const { return (path / name).string(); }
  // Writes `bytes` to `name` in the directory; returns its path.
  template <class Bytes>
  std::string write(const std::string& name, const Bytes& bytes) const {
    const std::string p = file(name);
    std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    return p;
  }
};

}  // namespace vkamp::test
