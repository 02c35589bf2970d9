// NumPy .npy arrays (format versions 1, 2 and 3): the magic "\x93NUMPY",
// two version bytes, a little-endian header length (2 bytes in v1, 4 in
// v2/v3), a Python dict literal {'descr': ..., 'fortran_order': ...,
// 'shape': (...)}, then the raw data. Accepted dtypes: <f4, <f8, <f2, |u1,
// <i4, <i8 (what user data comes as; <f8, NumPy's default, is narrowed to
// float32 by to_floats); C order only.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace vkamp::data {

enum class NpyType { F32, F64, F16, U8, I32, I64 };

struct NpyArray {
  NpyType dtype = NpyType::F32;
  std::vector<uint64_t> shape;
  std::vector<uint8_t> bytes;  // elements() values, little-endian, C order

  uint64_t elements() const;
  bool is_integer() const { return dtype == NpyType::U8 || dtype == NpyType::I32 || dtype == NpyType::I64; }
  // Every value as float (integers and float64 rounded to the nearest
  // float; a float64 past float32's range becomes an infinity).
  std::vector<float> to_floats() const;
  // Element i (flat, C order) as double, exactly as stored (for messages
  // about a value that to_floats cannot keep).
  double at(uint64_t i) const;
  // Every value of an integer array, widened.
  std::vector<int64_t> to_integers() const;
};

const char* npy_descr(NpyType t);  // "<f4", as in the header
// "(3, 4)", as NumPy prints a shape.
std::string shape_text(const std::vector<uint64_t>& shape);

// `label` names the array in errors ("x.npy: byte 10: ..."); byte offsets
// count from the start of `bytes`. Throws DataError.
NpyArray parse_npy(const uint8_t* bytes, size_t size, const std::string& label);
NpyArray read_npy(const std::string& path);

}  // namespace vkamp::data
