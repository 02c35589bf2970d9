// The .npy reader. The header dict is parsed by a small recursive-descent
// reader of exactly the Python literals NumPy writes (strings, True/False,
// tuples of integers), each error naming its byte offset in the file; the
// data size the shape implies is checked against the file before anything
// is allocated for it.
#include "vkamp/data/npy.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "file_bytes.hpp"
#include "finite_values.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/data/data_error.hpp"

namespace vkamp::data {
namespace {


constexpr uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

struct DtypeInfo {
  NpyType type;
  const char* descr;
  size_t bytes;
};
constexpr DtypeInfo kDtypes[] = {
    {NpyType::F32, "<f4", 4}, {NpyType::F64, "<f8", 8}, {NpyType::F16, "<f2", 2},
    {NpyType::U8, "|u1", 1},  {NpyType::I32, "<i4", 4}, {NpyType::I64, "<i8", 8},
};

const DtypeInfo& info(NpyType t) {
  for (const DtypeInfo& d : kDtypes)
    if (d.type == t) return d;
  throw std::logic_error("npy: unknown NpyType");
}

std::string accepted_dtypes() {
  std::string s;
  for (const DtypeInfo& d : kDtypes) s += std::string(s.empty() ? "'" : ", '") + d.descr + "'";
  return s + ", and text for class names ('<U6', '|S6')";
}

// '<UN' (UCS-4) or '|SN' (bytes), N >= 1: a text dtype and its N.
bool text_dtype(const std::string& descr, NpyType& type, uint64_t& chars) {
  if (descr.size() < 3 || descr.size() > 12) return false;
  if (descr.compare(0, 2, "<U") == 0) type = NpyType::Unicode;
  else if (descr.compare(0, 2, "|S") == 0) type = NpyType::Bytes;
  else return false;
  chars = 0;
  for (size_t i = 2; i < descr.size(); ++i) {
    if (descr[i] < '0' || descr[i] > '9') return false;
    chars = chars * 10 + uint64_t(descr[i] - '0');
  }
  return chars > 0;
}

// One code point as UTF-8; false for one that is not Unicode (a surrogate
// or past U+10FFFF).
bool append_utf8(uint32_t c, std::string& out) {
  if (c < 0x80) {
    out += char(c);
  } else if (c < 0x800) {
    out += char(0xC0 | (c >> 6));
    out += char(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    if (c >= 0xD800 && c <= 0xDFFF) return false;
    out += char(0xE0 | (c >> 12));
    out += char(0x80 | ((c >> 6) & 0x3F));
    out += char(0x80 | (c & 0x3F));
  } else if (c <= 0x10FFFF) {
    out += char(0xF0 | (c >> 18));
    out += char(0x80 | ((c >> 12) & 0x3F));
    out += char(0x80 | ((c >> 6) & 0x3F));
    out += char(0x80 | (c & 0x3F));
  } else {
    return false;
  }
  return true;
}

uint64_t load_le(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}

struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<uint64_t> shape;
};

// The header dict, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
class HeaderParser {
 public:
  HeaderParser(const char* text, size_t size, size_t file_offset, const std::string& label)
      : text_(text), size_(size), base_(file_offset), label_(label) {}

  Header parse() {
    Header h;
    bool has_descr = false, has_order = false, has_shape = false;
    skip_space();
    expect('{', "the header dict to open with '{'");
    while (true) {
      skip_space();
      if (peek() == '}') break;
      const size_t key_at = pos_;
      const std::string key = read_string("a quoted key");
      skip_space();
      expect(':', "':' after the key");
      skip_space();
      if (key == "descr") {
        h.descr = read_string("the dtype as a quoted string ('descr')");
        has_descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = read_bool();
        has_order = true;
      } else if (key == "shape") {
        h.shape = read_shape();
        has_shape = true;
      } else {
        pos_ = key_at;
        fail("unexpected key '" + key + "'; the header has 'descr', 'fortran_order' and 'shape'");
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != '}') fail("',' or '}' expected in the header dict");
    }
    ++pos_;  // '}'
    skip_space();
    if (pos_ < size_) fail("unexpected text after the header dict closes");
    if (!has_descr || !has_order || !has_shape)
      fail(std::string("the header dict lacks '") + (!has_descr ? "descr" : !has_order ? "fortran_order" : "shape") +
           "'");
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw DataError(label_ + ": byte " + std::to_string(base_ + pos_) + ": " + what);
  }
  // The next character; running off the end means the dict never closed.
  char peek() const {
    if (pos_ >= size_) fail("header ends before its dict closes");
    return text_[pos_];
  }
  void skip_space() {
    while (pos_ < size_ && (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t' || text_[pos_] == '\r'))
      ++pos_;
  }
  void expect(char c, const std::string& what) {
    if (peek() != c) fail(what + " expected");
    ++pos_;
  }
  std::string read_string(const std::string& what) {
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail(what + " expected");
    ++pos_;
    const size_t start = pos_;
    while (peek() != quote) ++pos_;
    return std::string(text_ + start, text_ + pos_++);
  }
  bool read_bool() {
    for (const char* word : {"True", "False"}) {
      const size_t n = std::strlen(word);
      if (size_ - pos_ >= n && std::memcmp(text_ + pos_, word, n) == 0) {
        pos_ += n;
        return word[0] == 'T';
      }
    }
    fail("True or False expected for 'fortran_order'");
  }
  std::vector<uint64_t> read_shape() {
    std::vector<uint64_t> shape;
    expect('(', "the shape as a tuple '(...)'");
    skip_space();
    while (peek() != ')') {
      if (peek() < '0' || peek() > '9') fail("a dimension (a non-negative integer) expected in the shape");
      uint64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (v > (std::numeric_limits<uint64_t>::max() - 9) / 10) fail("a dimension of the shape overflows 64 bits");
        v = v * 10 + uint64_t(text_[pos_++] - '0');
      }
      if (peek() == 'L') ++pos_;  // Python 2 wrote longs so
      shape.push_back(v);
      skip_space();
      if (peek() == ',') {
        ++pos_;
        skip_space();
      } else if (peek() != ')') {
        fail("',' or ')' expected in the shape");
      }
    }
    ++pos_;
    return shape;
  }

  const char* text_;
  size_t size_, pos_ = 0, base_;
  const std::string& label_;
};

}  // namespace

const char* npy_descr(NpyType t) {
  if (t == NpyType::Unicode) return "<U";
  if (t == NpyType::Bytes) return "|S";
  return info(t).descr;
}

std::string npy_descr(const NpyArray& a) {
  return a.is_text() ? npy_descr(a.dtype) + std::to_string(a.chars) : std::string(npy_descr(a.dtype));
}

size_t NpyArray::item_bytes() const {
  if (dtype == NpyType::Unicode) return size_t(chars) * 4;
  if (dtype == NpyType::Bytes) return size_t(chars);
  return info(dtype).bytes;
}

std::vector<std::string> NpyArray::to_strings(const std::string& label) const {
  if (!is_text()) throw std::logic_error("npy: to_strings on a numeric array");
  const size_t width = item_bytes(), n = width ? bytes.size() / width : 0;
  std::vector<std::string> out(n);
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* p = bytes.data() + i * width;
    std::string& s = out[i];
    if (dtype == NpyType::Bytes) {
      s.assign(reinterpret_cast<const char*>(p), width);
    } else {
      for (size_t c = 0; c < chars; ++c)
        if (!append_utf8(static_cast<uint32_t>(load_le(p + 4 * c, 4)), s))
          throw DataError(label + ": index " + std::to_string(i) + ": character " + std::to_string(c) +
                          " is not a Unicode code point");
    }
    s.erase(s.find_last_not_of('\0') + 1);  // NumPy pads with NULs
  }
  return out;
}

std::string shape_text(const std::vector<uint64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

uint64_t NpyArray::elements() const {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n;
}

double NpyArray::at(uint64_t i) const {
  if (is_text()) throw std::logic_error("npy: at() on a text array");
  const uint8_t* p = bytes.data() + i * info(dtype).bytes;
  switch (dtype) {
    case NpyType::F32: {
      const uint32_t bits = static_cast<uint32_t>(load_le(p, 4));
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    case NpyType::F64: {
      const uint64_t bits = load_le(p, 8);
      double d;
      std::memcpy(&d, &bits, 8);
      return d;
    }
    case NpyType::F16: return fp16_to_f32(static_cast<uint16_t>(load_le(p, 2)));
    case NpyType::U8: return p[0];
    case NpyType::I32: return static_cast<int32_t>(load_le(p, 4));
    case NpyType::I64: return static_cast<double>(static_cast<int64_t>(load_le(p, 8)));
    case NpyType::Unicode:
    case NpyType::Bytes: break;
  }
  return 0;
}

std::vector<float> NpyArray::to_floats() const {
  if (is_text()) throw std::logic_error("npy: to_floats on a text array");
  const size_t n = bytes.size() / info(dtype).bytes;
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) {
    // int64 directly: through double it would be rounded twice.
    out[i] = dtype == NpyType::I64 ? static_cast<float>(static_cast<int64_t>(load_le(bytes.data() + 8 * i, 8)))
                                   : to_float32(at(i));
  }
  return out;
}

std::vector<int64_t> NpyArray::to_integers() const {
  if (!is_integer()) throw std::logic_error("npy: to_integers on a float array");
  const size_t width = info(dtype).bytes;
  const size_t n = bytes.size() / width;
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t raw = load_le(bytes.data() + width * i, width);
    out[i] = dtype == NpyType::U8    ? int64_t(raw)
             : dtype == NpyType::I32 ? int64_t(int32_t(uint32_t(raw)))
                                     : int64_t(raw);
  }
  return out;
}

NpyArray parse_npy(const uint8_t* bytes, size_t size, const std::string& label) {
  auto fail = [&](size_t at, const std::string& what) -> DataError {
    return DataError(label + ": byte " + std::to_string(at) + ": " + what);
  };
  if (size == 0) throw fail(0, "the file is empty; a .npy file starts with \\x93NUMPY");
  if (size < sizeof(kMagic) || std::memcmp(bytes, kMagic, sizeof(kMagic)) != 0)
    throw fail(0, "not a .npy file: the magic \\x93NUMPY is missing");
  if (size < 8) throw fail(size, "truncated: the file ends inside the format version");
  const unsigned major = bytes[6], minor = bytes[7];
  if (major < 1 || major > 3)
    throw fail(6, "format version " + std::to_string(major) + "." + std::to_string(minor) +
                      "; versions 1, 2 and 3 are read");
  const size_t length_bytes = major == 1 ? 2 : 4;  // v2 widened the header length
  const size_t header_at = 8 + length_bytes;
  if (size < header_at) throw fail(size, "truncated: the file ends inside the header length");
  const uint64_t header_len = load_le(bytes + 8, length_bytes);
  if (header_len > size - header_at)
    throw fail(header_at, "truncated: the header is " + std::to_string(header_len) + " bytes, the file has " +
                              std::to_string(size - header_at) + " after the header length");

  const Header h =
      HeaderParser(reinterpret_cast<const char*>(bytes + header_at), header_len, header_at, label).parse();
  NpyArray out;
  bool known = false;
  for (const DtypeInfo& d : kDtypes)
    if (h.descr == d.descr) out.dtype = d.type, known = true;
  if (!known && !text_dtype(h.descr, out.dtype, out.chars))
    throw fail(header_at, "dtype '" + h.descr + "' is not read; accepted: " + accepted_dtypes() +
                              " (little-endian where it matters)");
  if (h.fortran_order)
    throw fail(header_at, "fortran_order is True; C order expected (np.ascontiguousarray before saving)");

  const size_t data_at = header_at + header_len;
  if (out.chars > std::numeric_limits<uint32_t>::max())
    throw fail(header_at, "dtype '" + h.descr + "': strings of more than 2^32 - 1 characters are not read");
  uint64_t need = out.item_bytes();
  for (uint64_t d : h.shape) {
    if (d != 0 && need > std::numeric_limits<uint64_t>::max() / d)
      throw fail(header_at, "shape " + shape_text(h.shape) + " overflows 64 bits");
    need *= d;
  }
  if (std::find(h.shape.begin(), h.shape.end(), 0) != h.shape.end()) need = 0;
  const size_t have = size - data_at;
  if (need > have)
    throw fail(size, "truncated: shape " + shape_text(h.shape) + " of " + h.descr + " needs " + std::to_string(need) +
                         " bytes of data from byte " + std::to_string(data_at) + ", the file has " +
                         std::to_string(have));
  if (need < have)
    throw fail(data_at + need, std::to_string(have - need) + " bytes of trailing data after the " +
                                   std::to_string(need) + " bytes shape " + shape_text(h.shape) + " describes");
  out.shape = h.shape;
  out.bytes.assign(bytes + data_at, bytes + data_at + need);
  return out;
}

NpyArray read_npy(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  return parse_npy(bytes.data(), bytes.size(), path);
}

}  // namespace vkamp::data
