#include "vkamp/data/npy_writer.hpp"

#include <cstring>
#include <fstream>

#include "vkamp/data/npy.hpp"
#include "vkamp/data/data_error.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::data {

void write_npy_f32(const std::string& path, const std::vector<uint64_t>& shape, const std::vector<float>& values) {
  uint64_t elements = 1;
  for (uint64_t d : shape) elements *= d;
  if (elements != values.size())
    throw DataError(path + ": " + std::to_string(values.size()) + " values do not fill the shape " +
                           shape_text(shape));
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape_text(shape) + ", }";
  // The magic, version, length and header together are a multiple of 64
  // bytes, ending in a newline, as NumPy writes them.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  const uint16_t len = uint16_t(header.size());
  std::ofstream f(vkamp::platform::path_from_utf8(path), std::ios::binary);
  if (!f) throw DataError(path + ": cannot be written");
  f.write("\x93NUMPY\x01\x00", 8);
  const char len_bytes[2] = {char(len & 0xff), char(len >> 8)};  // little-endian
  f.write(len_bytes, 2);
  f.write(header.data(), std::streamsize(header.size()));
  f.write(reinterpret_cast<const char*>(values.data()), std::streamsize(values.size() * sizeof(float)));
  if (!f.flush()) throw DataError(path + ": write failed");
}

}  // namespace vkamp::data
