#include "vkamp/io/gguf.hpp"

#include <cctype>
#include <cstring>
#include <limits>
#include <set>

#include "vkamp/platform/files.hpp"
#include "vkamp/platform/mapped_file.hpp"

namespace vkamp::io {
namespace {

using quant::GgmlType;

// Reads the file front to back; every read is checked against its end.
class Cursor {
 public:
  Cursor(const uint8_t* data, uint64_t size, const std::string& path) : data_(data), size_(size), path_(path) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw FormatError(path_ + ": " + what + " (at byte " + std::to_string(at_) + ")");
  }
  void need(uint64_t n, const char* what) const {
    if (n > size_ - at_) fail(std::string(what) + " runs past the end of the file");
  }
  template <class T>
  T get(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, data_ + at_, sizeof(T));
    at_ += sizeof(T);
    return v;
  }
  std::string string(const char* what) {
    uint64_t n = get<uint64_t>(what);
    need(n, what);
    std::string s(reinterpret_cast<const char*>(data_ + at_), size_t(n));
    at_ += n;
    return s;
  }
  uint64_t at() const { return at_; }
  uint64_t size() const { return size_; }

 private:
  const uint8_t* data_;
  uint64_t size_, at_ = 0;
  const std::string& path_;
};

size_t scalar_bytes(GgufType t) {
  switch (t) {
    case GgufType::U8: case GgufType::I8: case GgufType::BOOL: return 1;
    case GgufType::U16: case GgufType::I16: return 2;
    case GgufType::U32: case GgufType::I32: case GgufType::F32: return 4;
    case GgufType::U64: case GgufType::I64: case GgufType::F64: return 8;
    default: return 0;
  }
}

const char* type_name(GgufType t) {
  static const char* names[] = {"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64"};
  return uint32_t(t) < 13 ? names[uint32_t(t)] : "unknown";
}

bool is_integer(GgufType t) { return scalar_bytes(t) != 0 && t != GgufType::F32 && t != GgufType::F64; }

// One scalar as (integer, number); integers keep their exact value.
void read_scalar(Cursor& c, GgufType t, int64_t& integer, double& number) {
  switch (t) {
    case GgufType::U8: integer = c.get<uint8_t>("a u8"); break;
    case GgufType::I8: integer = c.get<int8_t>("an i8"); break;
    case GgufType::BOOL: {
      uint8_t b = c.get<uint8_t>("a bool");
      if (b > 1) c.fail("a bool holds " + std::to_string(b));
      integer = b;
      break;
    }
    case GgufType::U16: integer = c.get<uint16_t>("a u16"); break;
    case GgufType::I16: integer = c.get<int16_t>("an i16"); break;
    case GgufType::U32: integer = c.get<uint32_t>("a u32"); break;
    case GgufType::I32: integer = c.get<int32_t>("an i32"); break;
    case GgufType::I64: integer = c.get<int64_t>("an i64"); break;
    case GgufType::U64: {
      uint64_t v = c.get<uint64_t>("a u64");
      if (v > uint64_t(std::numeric_limits<int64_t>::max())) c.fail("a u64 value past 2^63");
      integer = int64_t(v);
      break;
    }
    case GgufType::F32: number = c.get<float>("an f32"); return;
    case GgufType::F64: number = c.get<double>("an f64"); return;
    default: c.fail("value type " + std::to_string(uint32_t(t)) + " is not a scalar");
  }
  number = double(integer);
}

GgufType value_type(Cursor& c, const std::string& key) {
  uint32_t t = c.get<uint32_t>("a value type");
  if (t > uint32_t(GgufType::F64)) c.fail("key " + key + " has value type " + std::to_string(t) + ", which GGUF does not define");
  return GgufType(t);
}

GgufValue read_value(Cursor& c, const std::string& key) {
  GgufValue v;
  v.type = value_type(c, key);
  if (v.type == GgufType::STRING) {
    v.text = c.string("a string value");
  } else if (v.type == GgufType::ARRAY) {
    v.element = value_type(c, key);
    uint64_t n = c.get<uint64_t>("an array's length");
    if (v.element == GgufType::ARRAY) c.fail("key " + key + " holds an array of arrays");
    // Each element takes at least 8 bytes (a string's length) or its
    // scalar's size: a longer array is a damaged file, checked before any
    // memory is reserved for it.
    uint64_t least = v.element == GgufType::STRING ? 8 : scalar_bytes(v.element);
    if (n > (c.size() - c.at()) / least) c.fail("key " + key + "'s array of " + std::to_string(n) + " runs past the end of the file");
    if (v.element == GgufType::STRING) {
      v.strings.reserve(size_t(n));
      for (uint64_t i = 0; i < n; ++i) v.strings.push_back(c.string("a string in an array"));
    } else {
      v.numbers.resize(size_t(n));
      for (uint64_t i = 0; i < n; ++i) {
        int64_t integer = 0;
        read_scalar(c, v.element, integer, v.numbers[size_t(i)]);
      }
    }
  } else {
    read_scalar(c, v.type, v.integer, v.number);
  }
  return v;
}

}  // namespace

bool is_gguf_path(const std::string& path) {
  if (path.size() < 5) return false;
  std::string ext = path.substr(path.size() - 5);
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".gguf";
}

uint64_t GgufTensor::elements() const {
  uint64_t n = 1;
  for (uint64_t d : dims) n *= d;
  return n;
}

std::vector<uint64_t> GgufTensor::shape() const { return {dims.rbegin(), dims.rend()}; }

GgufFile::GgufFile(GgufFile&&) noexcept = default;
GgufFile& GgufFile::operator=(GgufFile&&) noexcept = default;
GgufFile::~GgufFile() = default;

GgufFile GgufFile::open(const std::string& path) {
  GgufFile f;
  f.path_ = path;
  try {
    f.map_ = std::make_unique<platform::MappedFile>(path);
  } catch (const platform::FileError& e) {
    throw FormatError(e.what());
  }
  Cursor c(f.map_->data(), f.map_->size(), f.path_);
  c.need(4, "the magic");
  if (f.map_->size() < 4 || std::memcmp(f.map_->data(), "GGUF", 4) != 0) c.fail("not a GGUF file (no \"GGUF\" magic)");
  c.get<uint32_t>("the magic");
  f.version_ = c.get<uint32_t>("the version");
  if (f.version_ == 0x03000000u || f.version_ == 0x02000000u) c.fail("a big-endian GGUF file, which vkamp does not read");
  if (f.version_ != 2 && f.version_ != 3)
    c.fail("GGUF version " + std::to_string(f.version_) + "; vkamp reads versions 2 and 3");
  uint64_t n_tensors = c.get<uint64_t>("the tensor count");
  uint64_t n_keys = c.get<uint64_t>("the key count");
  // Each key takes at least 12 bytes and each tensor 28: a count past the
  // file's size is a damaged header, not a reason to reserve memory.
  if (n_keys > c.size() / 12 || n_tensors > c.size() / 28) c.fail("counts larger than the file can hold");

  for (uint64_t i = 0; i < n_keys; ++i) {
    std::string key = c.string("a key");
    if (f.metadata_.count(key) != 0) c.fail("key " + key + " appears twice");
    f.metadata_[key] = read_value(c, key);
  }
  if (const GgufValue* a = f.find("general.alignment")) {
    if (!is_integer(a->type) || a->integer <= 0 || (a->integer & (a->integer - 1)) != 0)
      throw FormatError(path + ": general.alignment must be a power of two, not " + std::to_string(a->integer));
    f.alignment_ = uint64_t(a->integer);
  }

  std::set<std::string> names;
  for (uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensor t;
    t.name = c.string("a tensor name");
    if (!names.insert(t.name).second) c.fail("tensor " + t.name + " appears twice");
    uint32_t n_dims = c.get<uint32_t>("a tensor's dimension count");
    if (n_dims == 0 || n_dims > 4) c.fail("tensor " + t.name + " has " + std::to_string(n_dims) + " dimensions (1 to 4)");
    uint64_t elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      uint64_t dim = c.get<uint64_t>("a tensor's dimension");
      if (dim == 0 || dim > (uint64_t(1) << 40) || elements > (uint64_t(1) << 50) / dim)
        c.fail("tensor " + t.name + " has dimension " + std::to_string(dim));
      elements *= dim;
      t.dims.push_back(dim);
    }
    uint32_t type = c.get<uint32_t>("a tensor's type");
    auto info = quant::ggml_type_info(type);
    if (!info)
      c.fail("tensor " + t.name + " has ggml type " + std::to_string(type) + "; vkamp reads " + quant::ggml_type_names());
    t.type = info->type;
    if (t.dims[0] % info->block_values != 0)
      c.fail("tensor " + t.name + "'s rows of " + std::to_string(t.dims[0]) + " are not whole " + info->name + " blocks of " +
             std::to_string(info->block_values));
    t.bytes = elements / info->block_values * info->block_bytes;
    t.offset = c.get<uint64_t>("a tensor's offset");
    if (t.offset % f.alignment_ != 0) c.fail("tensor " + t.name + "'s offset is not aligned to " + std::to_string(f.alignment_));
    f.tensors_.push_back(std::move(t));
  }
  uint64_t data_start = (c.at() + f.alignment_ - 1) / f.alignment_ * f.alignment_;
  for (GgufTensor& t : f.tensors_) {
    if (data_start > c.size() || t.offset > c.size() - data_start || t.bytes > c.size() - data_start - t.offset)
      throw FormatError(path + ": tensor " + t.name + "'s " + std::to_string(t.bytes) + " bytes run past the end of the file");
    t.offset += data_start;
    t.data = f.map_->data() + t.offset;
  }
  return f;
}

const GgufValue* GgufFile::find(const std::string& key) const {
  auto it = metadata_.find(key);
  return it == metadata_.end() ? nullptr : &it->second;
}

const GgufTensor* GgufFile::find_tensor(const std::string& name) const {
  for (const GgufTensor& t : tensors_)
    if (t.name == name) return &t;
  return nullptr;
}

namespace {

const GgufValue& must(const GgufFile& f, const std::string& key, const GgufValue* v) {
  if (v == nullptr) throw FormatError(f.path() + ": the key " + key + " is missing");
  return *v;
}

[[noreturn]] void wrong_type(const GgufFile& f, const std::string& key, const GgufValue& v, const char* expected) {
  std::string got = type_name(v.type);
  if (v.type == GgufType::ARRAY) got += std::string(" of ") + type_name(v.element);
  throw FormatError(f.path() + ": the key " + key + " is " + got + ", not " + expected);
}

}  // namespace

std::string GgufFile::string(const std::string& key) const {
  const GgufValue& v = must(*this, key, find(key));
  if (v.type != GgufType::STRING) wrong_type(*this, key, v, "a string");
  return v.text;
}

std::optional<std::string> GgufFile::optional_string(const std::string& key) const {
  if (find(key) == nullptr) return std::nullopt;
  return string(key);
}

uint64_t GgufFile::unsigned_integer(const std::string& key) const {
  const GgufValue& v = must(*this, key, find(key));
  if (!is_integer(v.type) || v.type == GgufType::BOOL || v.integer < 0) wrong_type(*this, key, v, "an integer >= 0");
  return uint64_t(v.integer);
}

std::optional<uint64_t> GgufFile::optional_unsigned(const std::string& key) const {
  if (find(key) == nullptr) return std::nullopt;
  return unsigned_integer(key);
}

double GgufFile::number(const std::string& key) const {
  const GgufValue& v = must(*this, key, find(key));
  if (scalar_bytes(v.type) == 0 || v.type == GgufType::BOOL) wrong_type(*this, key, v, "a number");
  return v.number;
}

std::optional<double> GgufFile::optional_number(const std::string& key) const {
  if (find(key) == nullptr) return std::nullopt;
  return number(key);
}

std::optional<bool> GgufFile::optional_bool(const std::string& key) const {
  const GgufValue* v = find(key);
  if (v == nullptr) return std::nullopt;
  if (v->type != GgufType::BOOL) wrong_type(*this, key, *v, "a bool");
  return v->integer != 0;
}

std::vector<std::string> GgufFile::strings(const std::string& key) const {
  const GgufValue& v = must(*this, key, find(key));
  if (v.type != GgufType::ARRAY || v.element != GgufType::STRING) wrong_type(*this, key, v, "an array of strings");
  return v.strings;
}

std::vector<double> GgufFile::numbers(const std::string& key) const {
  const GgufValue& v = must(*this, key, find(key));
  if (v.type != GgufType::ARRAY || scalar_bytes(v.element) == 0) wrong_type(*this, key, v, "an array of numbers");
  return v.numbers;
}

}  // namespace vkamp::io
