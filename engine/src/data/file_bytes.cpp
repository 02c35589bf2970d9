#include "file_bytes.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "vkamp/data/data_error.hpp"

namespace vkamp::data {

std::vector<uint8_t> read_file_bytes(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw DataError("cannot read " + path + ": is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError("cannot open " + path + ": " + std::strerror(errno));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw DataError("cannot read " + path + ": " + std::strerror(errno));
  return bytes;
}

}  // namespace vkamp::data
