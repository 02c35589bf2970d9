#include "vkamp/platform/mapped_file.hpp"

#include <cerrno>
#include <cstring>

#include "vkamp/platform.hpp"
#include "vkamp/platform/files.hpp"
#ifdef _WIN32
#include "wide.hpp"
#else
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace vkamp::platform {

#ifdef _WIN32
MappedFile::MappedFile(const std::string& path) {
  HANDLE file = CreateFileW(widen(path).c_str(), GENERIC_READ, FILE_SHARE_READ, nullptr, OPEN_EXISTING,
                            FILE_ATTRIBUTE_NORMAL, nullptr);
  if (file == INVALID_HANDLE_VALUE) throw FileError("cannot map " + path, error_text(GetLastError()));
  LARGE_INTEGER size{};
  if (!GetFileSizeEx(file, &size)) {
    DWORD err = GetLastError();
    CloseHandle(file);
    throw FileError("cannot map " + path, error_text(err));
  }
  size_ = uint64_t(size.QuadPart);
  if (size_ != 0) {
    mapping_ = CreateFileMappingW(file, nullptr, PAGE_READONLY, 0, 0, nullptr);
    DWORD err = GetLastError();
    if (mapping_ != nullptr) data_ = static_cast<const uint8_t*>(MapViewOfFile(mapping_, FILE_MAP_READ, 0, 0, 0));
    if (data_ == nullptr) err = GetLastError();
    if (data_ == nullptr) {
      if (mapping_ != nullptr) CloseHandle(mapping_);
      CloseHandle(file);
      throw FileError("cannot map " + path, error_text(err));
    }
  }
  CloseHandle(file);  // the mapping keeps the file open
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) UnmapViewOfFile(data_);
  if (mapping_ != nullptr) CloseHandle(mapping_);
}
#else
MappedFile::MappedFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw FileError("cannot map " + path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    int err = errno;
    ::close(fd);
    throw FileError("cannot map " + path, S_ISDIR(st.st_mode) ? "it is a folder" : std::strerror(err));
  }
  size_ = uint64_t(st.st_size);
  if (size_ != 0) {
    void* p = ::mmap(nullptr, size_t(size_), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      throw FileError("cannot map " + path, std::strerror(err));
    }
    data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);  // the mapping keeps the file
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_t(size_));
}
#endif

}  // namespace vkamp::platform
