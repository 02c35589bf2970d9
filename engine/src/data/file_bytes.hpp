// A whole file in memory, for the readers that parse from memory (so the
// same parser serves files, archive members and fuzz inputs). The file's
// real size bounds what the parsers allocate.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace vkamp::data {

// Throws DataError naming the file when it cannot be read.
std::vector<uint8_t> read_file_bytes(const std::string& path);
// The inflated bytes of a gzip file (data.csv.gz), the buffer growing as
// data actually comes out. A corrupt or cut-off stream is a DataError
// naming the file.
std::vector<uint8_t> read_gzip_bytes(const std::string& path);

}  // namespace vkamp::data
