// What the data reader tests share: a scratch directory, files written into
// it, a fresh random seed per run (printed by the tests that use it, so a
// failure can be replayed), and the DataError check.
#pragma once
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>

#include "support/rejected_with.hpp"
#include "vkamp/train/dataset.hpp"

namespace vkamp::test {

struct ScratchDir {
  std::filesystem::path path;
  ScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "vkamp-data-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  // Writes `bytes` to `name` in the directory; returns its path.
  template <class Bytes>
  std::string write(const std::string& name, const Bytes& bytes) const {
    const std::string p = (path / name).string();
    std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    return p;
  }
};

// A seed from the OS; tests log it with SCOPED_TRACE.
inline uint64_t fresh_seed() { return (uint64_t(std::random_device{}()) << 32) | std::random_device{}(); }

template <class Call>
::testing::AssertionResult data_rejected(Call&& call, const std::string& where, const std::string& phrase) {
  return rejected_with<train::DataError>(call, where, phrase);
}

}  // namespace vkamp::test
