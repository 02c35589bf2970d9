// safetensors files (https://huggingface.co/docs/safetensors): an 8-byte
// little-endian header length N, N bytes of JSON (per tensor: dtype, shape,
// data_offsets [begin, end) relative to the data section; plus an optional
// "__metadata__" object of string -> string), then the raw little-endian
// tensor data. The reader treats the file as untrusted: every length and
// offset is checked before use, and a bad file is a FormatError naming the
// file and what is wrong, never a crash or an out-of-bounds read.
#pragma once
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace vkamp::io {

enum class DType { F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL };

const char* dtype_name(DType d);  // "F32", as in the header
size_t dtype_bytes(DType d);

// A bad or unreadable file; the message names the file and the problem.
class FormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Tensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<uint64_t> shape;
  std::vector<uint8_t> data;  // product(shape) * dtype_bytes(dtype) bytes

  uint64_t elements() const;
};

struct TensorFile {
  std::map<std::string, std::string> metadata;  // "__metadata__"
  std::vector<Tensor> tensors;                  // in file order

  const Tensor* find(const std::string& name) const;
  // Converts an F32, F16 or BF16 tensor to floats. `label` (a file name)
  // goes into the FormatError for a missing tensor or another dtype.
  std::vector<float> floats(const std::string& name, const std::string& label) const;
};

// An F32, F16 or BF16 tensor's bytes as floats; FormatError naming `what`
// for another dtype.
std::vector<float> to_floats(DType dtype, const std::vector<uint8_t>& data, const std::string& what);

// A file's header alone, each tensor's data left in the file until it is
// read: a checkpoint of billions of parameters is never held twice.
struct TensorEntry {
  std::string name;
  DType dtype = DType::F32;
  std::vector<uint64_t> shape;
  uint64_t offset = 0, bytes = 0;  // in the file
};
struct TensorDirectory {
  std::string path;
  std::map<std::string, std::string> metadata;
  std::vector<TensorEntry> entries;  // in header order

  const TensorEntry* find(const std::string& name) const;
  // One tensor's bytes; FormatError when the file no longer holds them.
  std::vector<uint8_t> read(const TensorEntry& e) const;
  // `bytes` of them from byte `from` of the tensor (a slice: a large
  // tensor is converted a piece at a time).
  std::vector<uint8_t> read(const TensorEntry& e, uint64_t from, uint64_t bytes) const;
};
// Checks the header as read_safetensors does (every entry against the
// file's size), reading nothing past it.
TensorDirectory read_safetensors_header(const std::string& path);

// Parses a whole file held in memory; `label` names it in errors.
TensorFile parse_safetensors(const uint8_t* bytes, size_t size, const std::string& label);
TensorFile read_safetensors(const std::string& path);
// Writes atomically (a temporary file, then rename). The header is padded
// with spaces so the data starts 8-byte aligned; the tensors follow in the
// order given with no gaps (Hugging Face's reader rejects gaps), so in a
// file of one dtype every tensor is aligned to its element size. A name
// given twice, or data of the wrong size for its shape, is a FormatError.
void write_safetensors(const std::string& path, const TensorFile& file);

}  // namespace vkamp::io
