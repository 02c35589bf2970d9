// What the data reader tests share: a scratch directory with files written
// into it (support/scratch_dir.hpp), .npy and .npz bytes to write there, and
// the DataError check. (Random inputs come from test::rng(), seeded afresh
// per test.)
#pragma once
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "support/rejected_with.hpp"
#include "support/scratch_dir.hpp"
#include "vkamp/data/data_error.hpp"

namespace vkamp::test {

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

// A '<UN' .npy of `strings` (UCS-4, NUL-padded to N code points, ASCII
// here), as np.array(strings) writes it.
inline std::vector<uint8_t> unicode_npy(const std::vector<std::string>& strings) {
  size_t n = 1;
  for (const std::string& s : strings) n = std::max(n, s.size());
  std::vector<uint8_t> data(strings.size() * n * 4, 0);
  for (size_t i = 0; i < strings.size(); ++i)
    for (size_t c = 0; c < strings[i].size(); ++c) data[(i * n + c) * 4] = uint8_t(strings[i][c]);
  return npy_bytes("<U" + std::to_string(n), "(" + std::to_string(strings.size()) + ",)", data.data(), data.size());
}

// A stored (uncompressed) zip of `members` (name, bytes): an .npz as
// np.savez writes it, CRC-32 from zlib.
inline std::vector<uint8_t> stored_zip(const std::vector<std::pair<std::string, std::vector<uint8_t>>>& members) {
  std::vector<uint8_t> out, dir;
  auto put = [](std::vector<uint8_t>& v, uint64_t x, int bytes) {
    for (int i = 0; i < bytes; ++i) v.push_back(uint8_t(x >> (8 * i)));
  };
  for (const auto& [name, bytes] : members) {
    const uint32_t crc = uint32_t(crc32(0, bytes.data(), uInt(bytes.size())));
    const size_t offset = out.size();
    put(out, 0x04034b50, 4), put(out, 20, 2), put(out, 0, 2), put(out, 0, 2), put(out, 0, 4);
    put(out, crc, 4), put(out, bytes.size(), 4), put(out, bytes.size(), 4), put(out, name.size(), 2), put(out, 0, 2);
    out.insert(out.end(), name.begin(), name.end());
    out.insert(out.end(), bytes.begin(), bytes.end());
    put(dir, 0x02014b50, 4), put(dir, 20, 2), put(dir, 20, 2), put(dir, 0, 2), put(dir, 0, 2), put(dir, 0, 4);
    put(dir, crc, 4), put(dir, bytes.size(), 4), put(dir, bytes.size(), 4), put(dir, name.size(), 2);
    put(dir, 0, 2), put(dir, 0, 2), put(dir, 0, 2), put(dir, 0, 2), put(dir, 0, 4), put(dir, offset, 4);
    dir.insert(dir.end(), name.begin(), name.end());
  }
  const size_t dir_at = out.size();
  out.insert(out.end(), dir.begin(), dir.end());
  put(out, 0x06054b50, 4), put(out, 0, 2), put(out, 0, 2), put(out, members.size(), 2), put(out, members.size(), 2);
  put(out, dir.size(), 4), put(out, dir_at, 4), put(out, 0, 2);
  return out;
}

template <class Call>
::testing::AssertionResult data_rejected(Call&& call, const std::string& where, const std::string& phrase) {
  return rejected_with<data::DataError>(call, where, phrase);
}

}  // namespace vkamp::test
