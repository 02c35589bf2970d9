// What the data reader tests share: a scratch directory with files written
// into it, .npy bytes to write there, and the DataError check. (Random inputs come from test::rng(),
// seeded afresh per test.)
#pragma once
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

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

// A version-1 .npy of `dtype` with `shape_tuple` ("(3, 4)") and the raw
// `bytes` at `data`, header padded to 64 bytes as NumPy does.
inline std::vector<uint8_t> npy_bytes(const std::string& dtype, const std::string& shape_tuple, const void* data,
                                      size_t bytes) {
  std::string dict = "{'descr': '" + dtype + "', 'fortran_order': False, 'shape': " + shape_tuple + ", }";
  while ((10 + dict.size() + 1) % 64) dict += ' ';
  dict += '\n';
  std::string file("\x93NUMPY\x01\x00", 8);
  file += char(dict.size() & 0xff);
  file += char(dict.size() >> 8);
  file += dict;
  file.append(static_cast<const char*>(data), bytes);
  return std::vector<uint8_t>(file.begin(), file.end());
}

template <class Call>
::testing::AssertionResult data_rejected(Call&& call, const std::string& where, const std::string& phrase) {
  return rejected_with<data::DataError>(call, where, phrase);
}

}  // namespace vkamp::test
