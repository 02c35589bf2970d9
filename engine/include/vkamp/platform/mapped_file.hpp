// A whole file mapped read-only into memory (mmap; MapViewOfFile on
// Windows): a model file of gigabytes is read by the pages actually
// touched, never copied whole into host memory.
#pragma once
#include <cstdint>
#include <string>

namespace vkamp::platform {

class MappedFile {
 public:
  // Maps `path` (UTF-8). An empty file maps to size 0 and a null data().
  // Throws FileError("cannot map PATH: REASON").
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }

 private:
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  void* mapping_ = nullptr;  // Windows' file mapping object (unused elsewhere)
};

}  // namespace vkamp::platform
