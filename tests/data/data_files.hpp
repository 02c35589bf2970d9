// What the data reader tests share: a scratch directory with files written
// into it, and the DataError check. (Random inputs come from test::rng(),
// seeded afresh per test.)
#pragma once
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "support/rejected_with.hpp"
#include "vkamp/data/data_error.hpp"

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

template <class Call>
::testing::AssertionResult data_rejected(Call&& call, const std::string& where, const std::string& phrase) {
  return rejected_with<data::DataError>(call, where, phrase);
}

}  // namespace vkamp::test
