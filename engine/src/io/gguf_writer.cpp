#include "vkamp/io/gguf_writer.hpp"

#include <cstring>

#include "vkamp/platform/files.hpp"

namespace vkamp::io {
namespace {

// The header, directory and data as one little-endian byte stream.
class Bytes {
 public:
  template <class T>
  void put(T v) {
    uint8_t b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out.insert(out.end(), b, b + sizeof(T));
  }
  void text(const std::string& s) {
    put<uint64_t>(s.size());
    out.insert(out.end(), s.begin(), s.end());
  }
  std::vector<uint8_t> out;
};

// One value of a scalar type from the GgufValue's integer or number.
void scalar(Bytes& b, GgufType t, int64_t i, double x, const std::string& where) {
  switch (t) {
    case GgufType::U8: b.put<uint8_t>(uint8_t(i)); return;
    case GgufType::I8: b.put<int8_t>(int8_t(i)); return;
    case GgufType::U16: b.put<uint16_t>(uint16_t(i)); return;
    case GgufType::I16: b.put<int16_t>(int16_t(i)); return;
    case GgufType::U32: b.put<uint32_t>(uint32_t(i)); return;
    case GgufType::I32: b.put<int32_t>(int32_t(i)); return;
    case GgufType::U64: b.put<uint64_t>(uint64_t(i)); return;
    case GgufType::I64: b.put<int64_t>(i); return;
    case GgufType::F32: b.put<float>(float(x)); return;
    case GgufType::F64: b.put<double>(x); return;
    case GgufType::BOOL: b.put<uint8_t>(i ? 1 : 0); return;
    default: throw FormatError(where + " is not a scalar type");
  }
}

void value(Bytes& b, const GgufValue& v, const std::string& where) {
  b.put<uint32_t>(uint32_t(v.type));
  if (v.type == GgufType::STRING) return b.text(v.text);
  if (v.type != GgufType::ARRAY) return scalar(b, v.type, v.integer, v.number, where);
  b.put<uint32_t>(uint32_t(v.element));
  if (v.element == GgufType::STRING) {
    b.put<uint64_t>(v.strings.size());
    for (const std::string& s : v.strings) b.text(s);
    return;
  }
  b.put<uint64_t>(v.numbers.size());
  for (double x : v.numbers) scalar(b, v.element, int64_t(x), x, where);
}

}  // namespace

GgufValue gguf_string(const std::string& s) {
  GgufValue v;
  v.type = GgufType::STRING;
  v.text = s;
  return v;
}

GgufValue gguf_u32(uint32_t x) {
  GgufValue v;
  v.type = GgufType::U32;
  v.integer = x;
  v.number = x;
  return v;
}

GgufValue gguf_f32(float x) {
  GgufValue v;
  v.type = GgufType::F32;
  v.number = x;
  return v;
}

void write_gguf(const std::string& path, const GgufMetadata& metadata, const std::vector<GgufTensorOut>& tensors) {
  uint64_t alignment = 32;
  for (const auto& [key, v] : metadata)
    if (key == "general.alignment") alignment = uint64_t(v.integer);
  if (alignment == 0 || alignment % 8 != 0) throw FormatError(path + ": general.alignment must be a multiple of 8");
  Bytes head;
  head.put<uint32_t>(0x46554747u);  // "GGUF"
  head.put<uint32_t>(3);
  head.put<uint64_t>(tensors.size());
  head.put<uint64_t>(metadata.size());
  for (const auto& [key, v] : metadata) {
    head.text(key);
    value(head, v, path + ": " + key);
  }
  uint64_t offset = 0;
  std::vector<uint64_t> sizes;
  for (const GgufTensorOut& t : tensors) {
    uint64_t elements = 1;
    for (uint64_t d : t.dims) elements *= d;
    if (t.dims.empty() || elements == 0) throw FormatError(path + ": tensor " + t.name + " has no elements");
    sizes.push_back(quant::ggml_row_bytes(t.type, t.dims[0]) * (elements / t.dims[0]));
    head.text(t.name);
    head.put<uint32_t>(uint32_t(t.dims.size()));
    for (uint64_t d : t.dims) head.put<uint64_t>(d);
    head.put<uint32_t>(uint32_t(t.type));
    head.put<uint64_t>(offset);
    offset += (sizes.back() + alignment - 1) / alignment * alignment;
  }
  head.out.resize((head.out.size() + alignment - 1) / alignment * alignment, 0);
  platform::ReplacingFile out(path);
  out.write(head.out.data(), head.out.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    std::vector<uint8_t> data = tensors[i].bytes();
    if (data.size() != sizes[i])
      throw FormatError(path + ": tensor " + tensors[i].name + " has " + std::to_string(data.size()) + " bytes, its dims " +
                        std::to_string(sizes[i]));
    data.resize((data.size() + alignment - 1) / alignment * alignment, 0);
    out.write(data.data(), data.size());
  }
  out.commit();
}

}  // namespace vkamp::io
