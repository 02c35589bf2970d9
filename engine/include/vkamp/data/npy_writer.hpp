// Writes a float32 array as a NumPy .npy file (format 1.0, C order), which
// numpy.load and the .npy reader (npy.hpp) read back.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace vkamp::data {

// Throws DataError when the file cannot be written or `values` does
// not hold the elements of `shape`.
void write_npy_f32(const std::string& path, const std::vector<uint64_t>& shape, const std::vector<float>& values);

}  // namespace vkamp::data
