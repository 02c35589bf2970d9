// GGUF files (ggml's docs/gguf.md, versions 2 and 3): the header, the
// metadata key/value pairs, the tensor directory, and the tensors' data
// read in place from a memory map (a model of gigabytes is never copied
// whole into host memory). The file is untrusted: every count, length,
// type and offset is checked against the file before use, and a bad file
// is a FormatError naming the file and what is wrong.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vkamp/io/safetensors.hpp"  // FormatError
#include "vkamp/quant/ggml_type.hpp"

namespace vkamp::platform {
class MappedFile;
}

namespace vkamp::io {

// GGUF's value types (gguf_type).
enum class GgufType : uint32_t {
  U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, BOOL = 7,
  STRING = 8, ARRAY = 9, U64 = 10, I64 = 11, F64 = 12,
};

// One metadata value; `type` (and `element` for arrays) keep the file's own
// types, so a writer can give them back unchanged. Integers are in
// `integer` (and `number`), floats in `number`, bools in `integer` (0/1),
// strings in `text`; arrays of strings in `strings`, of numbers in
// `numbers` (arrays of arrays are refused: no model key uses them).
struct GgufValue {
  GgufType type = GgufType::U32;
  GgufType element = GgufType::U32;  // arrays only
  int64_t integer = 0;               // U64 values past 2^63 are refused
  double number = 0;
  std::string text;
  std::vector<std::string> strings;
  std::vector<double> numbers;
};

struct GgufTensor {
  std::string name;
  std::vector<uint64_t> dims;  // fastest first, as the file lists them
  quant::GgmlType type = quant::GgmlType::F32;
  uint64_t offset = 0;  // from the start of the file
  uint64_t bytes = 0;
  const uint8_t* data = nullptr;  // in the map, valid while the GgufFile lives

  uint64_t elements() const;
  // dims in the row-major order of PyTorch: {dims[n-1], ..., dims[0]}.
  std::vector<uint64_t> shape() const;
};

// Whether `path` names a GGUF file: its extension is .gguf, in any case.
bool is_gguf_path(const std::string& path);

class GgufFile {
 public:
  // Maps and checks `path` (UTF-8). Throws FormatError.
  static GgufFile open(const std::string& path);

  GgufFile(GgufFile&&) noexcept;
  GgufFile& operator=(GgufFile&&) noexcept;
  ~GgufFile();

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  const std::map<std::string, GgufValue>& metadata() const { return metadata_; }
  const std::vector<GgufTensor>& tensors() const { return tensors_; }

  const GgufValue* find(const std::string& key) const;
  const GgufTensor* find_tensor(const std::string& name) const;
  // Typed reads of one key. The plain forms throw FormatError naming the
  // file and the key when it is missing or of another type; the optional
  // forms return nullopt when it is missing (and still throw on a type).
  std::string string(const std::string& key) const;
  std::optional<std::string> optional_string(const std::string& key) const;
  uint64_t unsigned_integer(const std::string& key) const;  // any integer type, >= 0
  std::optional<uint64_t> optional_unsigned(const std::string& key) const;
  double number(const std::string& key) const;  // any integer or float type
  std::optional<double> optional_number(const std::string& key) const;
  std::optional<bool> optional_bool(const std::string& key) const;
  std::vector<std::string> strings(const std::string& key) const;  // an array of strings
  std::vector<double> numbers(const std::string& key) const;       // an array of numbers

 private:
  GgufFile() = default;
  std::string path_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  std::map<std::string, GgufValue> metadata_;
  std::vector<GgufTensor> tensors_;
  std::unique_ptr<platform::MappedFile> map_;
};

}  // namespace vkamp::io
