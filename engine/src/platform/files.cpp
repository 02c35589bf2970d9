#include "vkamp/platform/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "vkamp/platform.hpp"
#ifdef _WIN32
#include <io.h>

#include "wide.hpp"
#else
#include <unistd.h>
#endif

namespace vkamp::platform {
namespace {

std::string errno_text(int err) { return std::strerror(err); }

// One read or write never asks for more than this: Windows' _read and
// _write take an unsigned int count.
constexpr size_t kChunk = size_t{1} << 30;

#ifdef _WIN32
int open_read(const std::string& path) { return _wopen(widen(path).c_str(), _O_RDONLY | _O_BINARY | _O_NOINHERIT); }
int open_create(const std::string& path) {
  return _wopen(widen(path).c_str(), _O_WRONLY | _O_CREAT | _O_TRUNC | _O_BINARY | _O_NOINHERIT, _S_IREAD | _S_IWRITE);
}
long long read_some(int fd, void* out, size_t n) { return _read(fd, out, unsigned(std::min(n, kChunk))); }
long long write_some(int fd, const void* p, size_t n) { return _write(fd, p, unsigned(std::min(n, kChunk))); }
int close_fd(int fd) { return _close(fd); }
int flush_fd(int fd) { return _commit(fd); }
void remove_file(const std::string& path) { _wunlink(widen(path).c_str()); }
#else
int open_read(const std::string& path) { return ::open(path.c_str(), O_RDONLY | O_CLOEXEC); }
int open_create(const std::string& path) { return ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644); }
long long read_some(int fd, void* out, size_t n) { return ::read(fd, out, std::min(n, kChunk)); }
long long write_some(int fd, const void* p, size_t n) { return ::write(fd, p, std::min(n, kChunk)); }
int close_fd(int fd) { return ::close(fd); }
int flush_fd(int fd) { return ::fsync(fd); }
void remove_file(const std::string& path) { ::unlink(path.c_str()); }
#endif

// Moves tmp over path in one step, replacing what is there, and makes the
// move itself durable.
void replace(const std::string& tmp, const std::string& path) {
#ifdef _WIN32
  if (!MoveFileExW(widen(tmp).c_str(), widen(path).c_str(), MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
    throw FileError("cannot move " + tmp + " over " + path, error_text(GetLastError()));
#else
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    throw FileError("cannot move " + tmp + " over " + path, errno_text(errno));
  // The rename is only durable once the folder's entry is on disk.
  std::string dir = utf8_from_path(path_from_utf8(path).parent_path());
  if (dir.empty()) dir = ".";
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) throw FileError("wrote " + path + " but cannot open its folder " + dir, errno_text(errno));
  int rc = ::fsync(dfd);
  int err = errno;
  ::close(dfd);
  // Some file systems cannot fsync a folder at all; that is no failure of this write.
  if (rc != 0 && err != EINVAL && err != ENOTSUP)
    throw FileError("wrote " + path + " but cannot flush its folder " + dir, errno_text(err));
#endif
}

}  // namespace

std::FILE* open_file(const std::string& path, const char* mode) {
  std::string m = mode;
  if (m.find('b') == std::string::npos) m += 'b';
#ifdef _WIN32
  return _wfopen(widen(path).c_str(), widen(m).c_str());
#else
  return std::fopen(path.c_str(), m.c_str());
#endif
}

InputFile::InputFile(const std::string& path) : path_(path) {
  fd_ = open_read(path);
  if (fd_ < 0) {
    // Windows' _wopen refuses a folder (EACCES) where POSIX opens it.
    std::error_code ec;
    if (std::filesystem::is_directory(path_from_utf8(path), ec)) {
      directory_ = true;
      return;
    }
    throw FileError("cannot open " + path, errno_text(errno));
  }
#ifdef _WIN32
  struct _stat64 st {};
  if (_fstat64(fd_, &st) == 0) {
#else
  struct stat st {};
  if (::fstat(fd_, &st) == 0) {
#endif
    directory_ = S_ISDIR(st.st_mode);
    if (S_ISREG(st.st_mode)) size_ = uint64_t(st.st_size);
  }
}

InputFile::~InputFile() {
  if (fd_ >= 0) close_fd(fd_);
}

size_t InputFile::read(void* out, size_t n) {
  if (directory_) throw FileError("cannot read " + path_, "is a directory");
  size_t got = 0;
  while (got < n) {
    long long r = read_some(fd_, static_cast<char*>(out) + got, n - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      throw FileError("cannot read " + path_, errno_text(errno));
    }
    if (r == 0) break;
    got += size_t(r);
  }
  return got;
}

int InputFile::release_descriptor() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

ReplacingFile::ReplacingFile(const std::string& path)
    : path_(path), tmp_(path + ".tmp." + std::to_string(process_id())) {
  fd_ = open_create(tmp_);
  if (fd_ < 0) throw FileError("cannot create " + tmp_, errno_text(errno));
}

ReplacingFile::~ReplacingFile() {
  if (fd_ >= 0) close_fd(fd_);
  if (!committed_) remove_file(tmp_);
}

void ReplacingFile::write(const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    long long w = write_some(fd_, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw FileError("cannot write " + tmp_, errno_text(w < 0 ? errno : ENOSPC));
    p += w;
    n -= size_t(w);
  }
}

void ReplacingFile::commit() {
  if (flush_fd(fd_) != 0) throw FileError("cannot flush " + tmp_ + " to disk", errno_text(errno));
  int rc = close_fd(fd_);
  fd_ = -1;
  if (rc != 0) throw FileError("cannot close " + tmp_, errno_text(errno));
  replace(tmp_, path_);
  committed_ = true;
}

}  // namespace vkamp::platform
