// NumPy .npy arrays (format versions 1, 2 and 3): the magic "\x93NUMPY",
// two version bytes, a little-endian header length (2 bytes in v1, 4 in
// v2/v3), a Python dict literal {'descr': ..., 'fortran_order': ...,
// 'shape': (...)}, then the raw data. Accepted dtypes: <f4, <f8, <f2, |u1,
// <i4, <i8 (what user data comes as; <f8, NumPy's default, is narrowed to
// float32 by to_floats), and text for class names: <UN (N UCS-4 code
// points, what np.array(["setosa", ...]) holds) and |SN (N bytes), each
// padded with NULs; C order only.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace vkamp::data {

enum class NpyType { F32, F64, F16, U8, I32, I64, Unicode, Bytes };

struct NpyArray {
  NpyType dtype = NpyType::F32;
  std::vector<uint64_t> shape;
  std::vector<uint8_t> bytes;  // elements() values, little-endian, C order
  uint64_t chars = 0;          // Unicode and Bytes: the N of <UN or |SN

  uint64_t elements() const;
  size_t item_bytes() const;   // bytes per element
  bool is_integer() const { return dtype == NpyType::U8 || dtype == NpyType::I32 || dtype == NpyType::I64; }
  bool is_text() const { return dtype == NpyType::Unicode || dtype == NpyType::Bytes; }
  // Every value as float (integers and float64 rounded to the nearest
  // float; a float64 past float32's range becomes an infinity).
  std::vector<float> to_floats() const;
  // Element i (flat, C order) as double, exactly as stored (for messages
  // about a value that to_floats cannot keep).
  double at(uint64_t i) const;
  // Every value of an integer array, widened.
  std::vector<int64_t> to_integers() const;
  // Every value of a text array as UTF-8, the NUL padding removed. Throws
  // DataError naming `label` and the index for a code point that is not
  // Unicode.
  std::vector<std::string> to_strings(const std::string& label) const;
};

// "<f4", as in the header; "<U" and "|S" for text (npy_descr(a) has the N).
const char* npy_descr(NpyType t);
std::string npy_descr(const NpyArray& a);
// "(3, 4)", as NumPy prints a shape.
std::string shape_text(const std::vector<uint64_t>& shape);

// `label` names the array in errors ("x.npy: byte 10: ..."); byte offsets
// count from the start of `bytes`. Throws DataError.
NpyArray parse_npy(const uint8_t* bytes, size_t size, const std::string& label);
NpyArray read_npy(const std::string& path);

}  // namespace vkamp::data
