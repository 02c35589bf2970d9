// The safetensors reader and writer. The reader checks every length, offset
// and shape of an untrusted file before it touches the data; the writer
// produces files that Hugging Face's reader accepts (tensors contiguous, no
// gaps) with the data section starting 8-byte aligned.
#include "vkamp/io/safetensors.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <utility>

#include "vkamp/float_formats.hpp"
#include "vkamp/platform.hpp"
#include "vkamp/platform/files.hpp"

namespace vkamp::io {
namespace {

using Json = nlohmann::ordered_json;  // keeps the header's tensor order

// Hugging Face's reader refuses larger headers too.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct DTypeInfo {
  DType dtype;
  const char* name;
  size_t bytes;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::F64, "F64", 8}, {DType::F32, "F32", 4}, {DType::F16, "F16", 2}, {DType::BF16, "BF16", 2},
    {DType::I64, "I64", 8}, {DType::I32, "I32", 4}, {DType::I16, "I16", 2}, {DType::I8, "I8", 1},
    {DType::U8, "U8", 1},   {DType::BOOL, "BOOL", 1},
};

const DTypeInfo& info(DType d) {
  for (const DTypeInfo& i : kDTypes)
    if (i.dtype == d) return i;
  throw std::logic_error("safetensors: unknown DType value");
}

const DTypeInfo* find_dtype(const std::string& name) {
  for (const DTypeInfo& i : kDTypes)
    if (name == i.name) return &i;
  return nullptr;
}

[[noreturn]] void bad(const std::string& label, const std::string& what) {
  throw FormatError(label + ": " + what);
}

// a * b, or false when it does not fit in 64 bits.
bool multiply(uint64_t a, uint64_t b, uint64_t& out) {
  if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a) return false;
  out = a * b;
  return true;
}

std::string shape_text(const std::vector<uint64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

uint64_t checked_bytes(const std::vector<uint64_t>& shape, size_t element_bytes, const std::string& label,
                       const std::string& tensor) {
  uint64_t n = element_bytes;
  for (uint64_t d : shape)
    if (!multiply(n, d, n)) bad(label, "tensor '" + tensor + "': shape " + shape_text(shape) + " overflows 64 bits");
  return n;
}

// A tensor's header entry, checked against a data section of data_size
// bytes; `range` gets its [begin, end) there. The data is not read.
Tensor parse_entry(const std::string& name, const Json& entry, uint64_t data_size, const std::string& label,
                   std::pair<uint64_t, uint64_t>& range) {
  const std::string where = "tensor '" + name + "': ";
  if (!entry.is_object()) bad(label, where + "header entry is not a JSON object");
  for (const char* field : {"dtype", "shape", "data_offsets"})
    if (!entry.contains(field)) bad(label, where + "no \"" + field + "\" in its header entry");

  const Json& dt = entry["dtype"];
  if (!dt.is_string()) bad(label, where + "\"dtype\" is not a string");
  const DTypeInfo* dtype = find_dtype(dt.get<std::string>());
  if (!dtype) bad(label, where + "unknown dtype '" + dt.get<std::string>() + "'");

  Tensor t;
  t.name = name;
  t.dtype = dtype->dtype;
  const Json& shape = entry["shape"];
  if (!shape.is_array()) bad(label, where + "\"shape\" is not an array");
  for (const Json& d : shape) {
    // nlohmann keeps non-negative integers as unsigned, negative ones as signed.
    if (!d.is_number_unsigned()) bad(label, where + "shape entry " + d.dump() + " is not a non-negative integer");
    t.shape.push_back(d.get<uint64_t>());
  }

  const Json& offsets = entry["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
      !offsets[1].is_number_unsigned())
    bad(label, where + "\"data_offsets\" is not two non-negative integers: " + offsets.dump());
  uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
  if (begin > end) bad(label, where + "data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                                    ") begin after end");
  if (end > data_size)
    bad(label, where + "data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                   ") run past the end of the data (" + std::to_string(data_size) + " bytes; file truncated?)");
  uint64_t bytes = checked_bytes(t.shape, dtype->bytes, label, name);
  if (end - begin != bytes)
    bad(label, where + "data_offsets hold " + std::to_string(end - begin) + " bytes but shape " +
                   shape_text(t.shape) + " of " + dtype->name + " needs " + std::to_string(bytes));
  range = {begin, end};
  return t;
}

std::map<std::string, std::string> parse_metadata(const Json& m, const std::string& label) {
  if (!m.is_object()) bad(label, "\"__metadata__\" is not a JSON object");
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : m.items()) {
    if (!value.is_string()) bad(label, "\"__metadata__\" value of '" + key + "' is not a string: " + value.dump());
    out[key] = value.get<std::string>();
  }
  return out;
}

// Two tensors sharing bytes would alias; no writer produces that.
void check_no_overlap(const std::vector<std::pair<std::pair<uint64_t, uint64_t>, std::string>>& ranges,
                      const std::string& label) {
  auto sorted = ranges;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 1; i < sorted.size(); ++i) {
    const auto& [prev, prev_name] = sorted[i - 1];
    const auto& [cur, cur_name] = sorted[i];
    if (cur.first < prev.second && cur.first < cur.second)
      bad(label, "tensors '" + prev_name + "' and '" + cur_name + "' overlap in the data");
  }
}

std::string errno_text() { return std::strerror(errno); }

}  // namespace

const char* dtype_name(DType d) { return info(d).name; }
size_t dtype_bytes(DType d) { return info(d).bytes; }

uint64_t Tensor::elements() const {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;  // the reader has checked that this fits
  return n;
}

const Tensor* TensorFile::find(const std::string& name) const {
  for (const Tensor& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

std::vector<float> TensorFile::floats(const std::string& name, const std::string& label) const {
  const Tensor* t = find(name);
  if (!t) bad(label, "no tensor '" + name + "'");
  return to_floats(t->dtype, t->data, label + ": tensor '" + name + "'");
}

namespace {

// The 8-byte length, checked against the file's size.
uint64_t header_length(const uint8_t* first8, uint64_t size, const std::string& label) {
  if (size < 8)
    bad(label, "not a safetensors file: " + std::to_string(size) + " bytes, shorter than the 8-byte header length");
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = header_len << 8 | first8[i];
  if (header_len > kMaxHeaderBytes)
    bad(label, "not a safetensors file: header length " + std::to_string(header_len) + " is over the " +
                   std::to_string(kMaxHeaderBytes) + "-byte limit");
  if (header_len > size - 8)
    bad(label, "not a safetensors file or truncated: header length " + std::to_string(header_len) +
                   " runs past the end of the file (" + std::to_string(size) + " bytes)");
  return header_len;
}

struct Header {
  std::map<std::string, std::string> metadata;
  std::vector<Tensor> tensors;  // without their data
  std::vector<std::pair<uint64_t, uint64_t>> ranges;  // in the data section, per tensor
};

Header parse_header(const char* header, uint64_t header_len, uint64_t data_size, const std::string& label) {
  Json root;
  try {
    root = Json::parse(header, header + header_len);
  } catch (const Json::exception& e) {
    bad(label, std::string("header is not valid JSON: ") + e.what());
  }
  if (!root.is_object()) bad(label, "header is not a JSON object");
  Header h;
  std::vector<std::pair<std::pair<uint64_t, uint64_t>, std::string>> named;
  for (const auto& [name, entry] : root.items()) {
    if (name == "__metadata__") {
      h.metadata = parse_metadata(entry, label);
      continue;
    }
    std::pair<uint64_t, uint64_t> range;
    h.tensors.push_back(parse_entry(name, entry, data_size, label, range));
    h.ranges.push_back(range);
    named.push_back({range, name});
  }
  check_no_overlap(named, label);
  return h;
}

}  // namespace

TensorFile parse_safetensors(const uint8_t* bytes, size_t size, const std::string& label) {
  const uint64_t header_len = header_length(bytes, size, label);
  const uint8_t* data = bytes + 8 + header_len;
  Header h = parse_header(reinterpret_cast<const char*>(bytes + 8), header_len, size - 8 - header_len, label);
  TensorFile file;
  file.metadata = std::move(h.metadata);
  for (size_t i = 0; i < h.tensors.size(); ++i) {
    h.tensors[i].data.assign(data + h.ranges[i].first, data + h.ranges[i].second);
    file.tensors.push_back(std::move(h.tensors[i]));
  }
  return file;
}

TensorDirectory read_safetensors_header(const std::string& path) {
  std::ifstream in(platform::path_from_utf8(path), std::ios::binary | std::ios::ate);
  if (!in) bad(path, "cannot open: " + errno_text());
  const uint64_t size = uint64_t(in.tellg());
  uint8_t first8[8] = {};
  in.seekg(0);
  in.read(reinterpret_cast<char*>(first8), std::min<uint64_t>(8, size));
  const uint64_t header_len = header_length(first8, size, path);
  std::string header(header_len, '\0');
  in.read(header.data(), std::streamsize(header_len));
  if (!in) bad(path, "read error in the header: " + errno_text());
  Header h = parse_header(header.data(), header_len, size - 8 - header_len, path);
  TensorDirectory d;
  d.path = path;
  d.metadata = std::move(h.metadata);
  for (size_t i = 0; i < h.tensors.size(); ++i)
    d.entries.push_back({h.tensors[i].name, h.tensors[i].dtype, h.tensors[i].shape, 8 + header_len + h.ranges[i].first,
                         h.ranges[i].second - h.ranges[i].first});
  return d;
}

const TensorEntry* TensorDirectory::find(const std::string& name) const {
  for (const TensorEntry& e : entries)
    if (e.name == name) return &e;
  return nullptr;
}

std::vector<uint8_t> TensorDirectory::read(const TensorEntry& e) const { return read(e, 0, e.bytes); }

std::vector<uint8_t> TensorDirectory::read(const TensorEntry& e, uint64_t from, uint64_t n) const {
  if (from > e.bytes || n > e.bytes - from) bad(path, "tensor '" + e.name + "': a slice past its end");
  std::ifstream in(platform::path_from_utf8(path), std::ios::binary);
  if (!in) bad(path, "cannot open: " + errno_text());
  std::vector<uint8_t> bytes(n);
  in.seekg(std::streamoff(e.offset + from));
  in.read(reinterpret_cast<char*>(bytes.data()), std::streamsize(n));
  if (!in) bad(path, "tensor '" + e.name + "': read error (file changed or truncated?)");
  return bytes;
}

std::vector<float> to_floats(DType dtype, const std::vector<uint8_t>& data, const std::string& what) {
  switch (dtype) {
    case DType::F32: return unpack(Format::F32, data);
    case DType::F16: return unpack(Format::F16, data);
    case DType::BF16: return unpack(Format::BF16, data);
    default: throw FormatError(what + " has dtype " + dtype_name(dtype) + "; expected F32, F16 or BF16");
  }
}

TensorFile read_safetensors(const std::string& path) {
  std::ifstream in(platform::path_from_utf8(path), std::ios::binary);
  if (!in) bad(path, "cannot open: " + errno_text());
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) bad(path, "read error: " + errno_text());
  return parse_safetensors(bytes.data(), bytes.size(), path);
}

void write_safetensors(const std::string& path, const TensorFile& file) {
  Json header = Json::object();
  if (!file.metadata.empty()) {
    Json meta = Json::object();
    for (const auto& [k, v] : file.metadata) meta[k] = v;
    header["__metadata__"] = std::move(meta);
  }
  uint64_t offset = 0;
  for (const Tensor& t : file.tensors) {
    if (t.name == "__metadata__" || header.contains(t.name))
      bad(path, "cannot write a tensor named '" + t.name + "': the name is taken");
    uint64_t bytes = checked_bytes(t.shape, dtype_bytes(t.dtype), path, t.name);
    if (bytes != t.data.size())
      bad(path, "tensor '" + t.name + "' has " + std::to_string(t.data.size()) + " bytes of data but shape " +
                    shape_text(t.shape) + " of " + dtype_name(t.dtype) + " needs " + std::to_string(bytes));
    header[t.name] = {{"dtype", dtype_name(t.dtype)}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  // Trailing spaces (allowed by the format) put the data at an 8-byte boundary.
  text.append((8 - text.size() % 8) % 8, ' ');
  uint8_t len[8];
  for (int i = 0; i < 8; ++i) len[i] = uint8_t(uint64_t(text.size()) >> (8 * i));

  try {
    platform::ReplacingFile out(path);
    out.write(len, 8);
    out.write(text.data(), text.size());
    for (const Tensor& t : file.tensors) out.write(t.data.data(), t.data.size());
    out.commit();
  } catch (const platform::FileError& e) {
    bad(path, std::string("cannot write: ") + e.what());
  }
}

}  // namespace vkamp::io
