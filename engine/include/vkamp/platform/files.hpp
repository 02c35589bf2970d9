// Files as bytes, at UTF-8 paths: reading one through a descriptor, opening
// a FILE* in binary mode, and replacing a file atomically (written beside
// it, flushed to disk, then moved over the old one in one step, so a crash
// leaves the old file or the new one, never half of either).
#pragma once
#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>

namespace vkamp::platform {

// A file operation that failed: what() is "STEP PATH: REASON", reason()
// the REASON alone, for callers that name the file their own way.
class FileError : public std::runtime_error {
 public:
  FileError(const std::string& step, const std::string& reason)
      : std::runtime_error(step + ": " + reason), reason_(reason) {}
  const std::string& reason() const { return reason_; }

 private:
  std::string reason_;
};

// std::fopen at a UTF-8 path; `mode` is forced to binary ("b" added).
std::FILE* open_file(const std::string& path, const char* mode);

// A file opened for reading in binary mode.
class InputFile {
 public:
  // Throws FileError("cannot open PATH: REASON").
  explicit InputFile(const std::string& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  bool is_directory() const { return directory_; }
  // The size of a regular file; nullopt for anything else (a pipe, a device).
  std::optional<uint64_t> regular_size() const { return size_; }
  // Up to n bytes; fewer only at the end. Throws FileError on a read error.
  size_t read(void* out, size_t n);
  // Hands the descriptor over (to zlib's gzdopen); the file no longer owns it.
  int release_descriptor();

 private:
  std::string path_;
  int fd_ = -1;
  bool directory_ = false;
  std::optional<uint64_t> size_;
};

// Writes "<path>.tmp.<pid>" and, on commit(), flushes it to disk and moves
// it over `path` (MoveFileExW with REPLACE_EXISTING | WRITE_THROUGH on
// Windows, rename and a flush of the folder on POSIX). Destroyed without
// commit(), it removes the temporary file and leaves `path` as it was.
class ReplacingFile {
 public:
  // Throws FileError("cannot create TMP: REASON").
  explicit ReplacingFile(const std::string& path);
  ~ReplacingFile();
  ReplacingFile(const ReplacingFile&) = delete;
  ReplacingFile& operator=(const ReplacingFile&) = delete;

  // Throws FileError("cannot write TMP: REASON").
  void write(const void* data, size_t n);
  // Throws FileError naming the step that failed.
  void commit();

  const std::string& temp_path() const { return tmp_; }

 private:
  std::string path_, tmp_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace vkamp::platform
