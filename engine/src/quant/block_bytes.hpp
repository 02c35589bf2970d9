// Little-endian fields of ggml's blocks and the 6-bit scales of Q4_K and
// Q5_K, shared by the dequantizer and the quantizers.
#pragma once
#include <cstdint>

namespace vkamp::quant::detail {

inline uint16_t read_u16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }
inline uint32_t read_u32(const uint8_t* p) { return uint32_t(read_u16(p)) | (uint32_t(read_u16(p + 2)) << 16); }
inline void write_u16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v);
  p[1] = uint8_t(v >> 8);
}
inline void write_u32(uint8_t* p, uint32_t v) {
  write_u16(p, uint16_t(v));
  write_u16(p + 2, uint16_t(v >> 16));
}

// Sub-block j's (0..7) 6-bit scale and min of a Q4_K / Q5_K block's 12
// scale bytes: j < 4 in the low 6 bits of bytes j and j + 4; j >= 4 in the
// nibbles of byte j + 4 with their top two bits in bytes j - 4 and j.
struct ScaleMin {
  uint8_t scale, min;
};
inline ScaleMin scale_min_k4(const uint8_t* q, uint32_t j) {
  if (j < 4) return {uint8_t(q[j] & 63), uint8_t(q[j + 4] & 63)};
  return {uint8_t((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4)), uint8_t((q[j + 4] >> 4) | ((q[j] >> 6) << 4))};
}

}  // namespace vkamp::quant::detail
