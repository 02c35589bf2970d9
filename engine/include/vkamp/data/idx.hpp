// IDX files (magic 0x0000080N, dims, big-endian), as MNIST and the Debian
// package dataset-fashion-mnist ship them, gzip-compressed when the name
// ends in .gz.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace vkamp::data {

struct IdxArray {
  std::vector<uint32_t> dims;
  std::vector<uint8_t> data;  // unsigned bytes (type 0x08 only)
};

// Throws DataError naming the file on a missing, truncated or malformed
// file. Returns the dims and the raw bytes.
IdxArray read_idx(const std::string& path);
// The same for plain (not gzip) IDX bytes in memory; `label` names them in
// errors (the fuzz target's way in).
IdxArray parse_idx(const uint8_t* bytes, size_t size, const std::string& label);

}  // namespace vkamp::data
