// One function per block type giving value k of a block, in ggml's float
// operations (ggml-quants.c's dequantize_row_*), and a row loop over them.
// The file is compiled with -ffp-contract=off (engine/CMakeLists.txt): ggml's
// d1 * q - m1 is a rounded product and a rounded difference, and an fma
// would round once.
#include "vkamp/quant/dequantize.hpp"

#include <bit>
#include <stdexcept>
#include <string>

#include "block_bytes.hpp"

namespace vkamp::quant {

using detail::read_u16;
using detail::read_u32;
using detail::scale_min_k4;

float ggml_fp16_to_f32(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 31u;
  uint32_t m = h & 0x3FFu;
  uint32_t bits;
  if (e == 31) {
    bits = 0x7F800000u | (m << 13) | (m ? 0x00400000u : 0u);  // inf, or a quiet NaN
  } else if (e != 0) {
    bits = ((e + 112u) << 23) | (m << 13);
  } else if (m == 0) {
    bits = 0;
  } else {
    // Subnormal: m * 2^-24, a normal fp32 whose leading bit is m's top bit.
    uint32_t top = 31u - uint32_t(std::countl_zero(m));
    bits = ((top + 103u) << 23) | ((m << (23u - top)) & 0x7FFFFFu);
  }
  return std::bit_cast<float>(sign | bits);
}

namespace {

float half_at(const uint8_t* p) { return ggml_fp16_to_f32(read_u16(p)); }

// Q4_0: d, then 16 bytes whose low nibbles are values 0..15 and high nibbles 16..31.
uint32_t nibble(const uint8_t* qs, uint32_t k) { return k < 16 ? qs[k] & 0xFu : qs[k - 16] >> 4; }

float q4_0(const uint8_t* b, uint32_t k) { return float(int(nibble(b + 2, k)) - 8) * half_at(b); }

float q4_1(const uint8_t* b, uint32_t k) { return float(nibble(b + 4, k)) * half_at(b) + half_at(b + 2); }

// Q5_0/Q5_1: bit k of the u32 qh is value k's fifth bit.
float q5_0(const uint8_t* b, uint32_t k) {
  uint32_t high = ((read_u32(b + 2) >> k) & 1u) << 4;
  return float(int(nibble(b + 6, k) | high) - 16) * half_at(b);
}

float q5_1(const uint8_t* b, uint32_t k) {
  uint32_t high = ((read_u32(b + 4) >> k) & 1u) << 4;
  return float(nibble(b + 8, k) | high) * half_at(b) + half_at(b + 2);
}

float q8_0(const uint8_t* b, uint32_t k) { return float(int8_t(b[2 + k])) * half_at(b); }

// Q4_K/Q5_K: 8 sub-blocks of 32; each 64 values share 32 bytes of qs, the
// first 32 in the low nibbles. ggml: (d * sc) * q - (dmin * m), each rounded.
uint32_t k_nibble(const uint8_t* qs, uint32_t k) {
  uint8_t byte = qs[32 * (k / 64) + k % 32];
  return (k / 32) % 2 ? byte >> 4 : byte & 0xFu;
}

float k_scaled(const uint8_t* b, uint32_t k, uint32_t q) {
  detail::ScaleMin sm = scale_min_k4(b + 4, k / 32);
  const float d1 = half_at(b) * float(sm.scale);
  const float m1 = half_at(b + 2) * float(sm.min);
  return d1 * float(q) - m1;
}

float q4_k(const uint8_t* b, uint32_t k) { return k_scaled(b, k, k_nibble(b + 16, k)); }

// Q5_K: qh (32 bytes after the scales): bit k / 32 of byte k % 32 adds 16.
float q5_k(const uint8_t* b, uint32_t k) {
  uint32_t high = (b[16 + k % 32] >> (k / 32)) & 1u;
  return k_scaled(b, k, k_nibble(b + 48, k) + 16u * high);
}

// Q6_K: ql[128], qh[64], int8 scales[16], d. Each 128 values use 64 bytes
// of ql and 32 of qh: quarter p of them the low (p even) or high nibbles of
// ql[l] (p < 2) or ql[l + 32], and bits 2p..2p+1 of qh[l]. ggml: (d * sc) * q.
float q6_k(const uint8_t* b, uint32_t k) {
  const uint32_t c = k / 128, p = (k % 128) / 32, l = k % 32;
  const uint8_t low_byte = b[64 * c + l + 32 * (p % 2)];
  const uint32_t low = p < 2 ? low_byte & 0xFu : low_byte >> 4;
  const uint32_t high = (b[128 + 32 * c + l] >> (2 * p)) & 3u;
  const int q = int(low | (high << 4)) - 32;
  const float d = half_at(b + 208);
  return (d * float(int8_t(b[192 + k / 16]))) * float(q);
}

}  // namespace

float block_value(GgmlType t, const uint8_t* b, uint32_t k) {
  switch (t) {
    case GgmlType::F32: return std::bit_cast<float>(read_u32(b));
    case GgmlType::F16: return half_at(b);
    case GgmlType::BF16: return std::bit_cast<float>(uint32_t(read_u16(b)) << 16);
    case GgmlType::Q4_0: return q4_0(b, k);
    case GgmlType::Q4_1: return q4_1(b, k);
    case GgmlType::Q5_0: return q5_0(b, k);
    case GgmlType::Q5_1: return q5_1(b, k);
    case GgmlType::Q8_0: return q8_0(b, k);
    case GgmlType::Q4_K: return q4_k(b, k);
    case GgmlType::Q5_K: return q5_k(b, k);
    case GgmlType::Q6_K: return q6_k(b, k);
  }
  throw std::invalid_argument("block_value: ggml type " + std::to_string(uint32_t(t)) + " is not one vkamp reads");
}

void dequantize_row(GgmlType t, const uint8_t* blocks, float* out, uint64_t n) {
  const GgmlTypeInfo& info = ggml_type_info(t);
  const uint64_t nblocks = ggml_row_bytes(t, n) / info.block_bytes;  // checks n
  for (uint64_t b = 0; b < nblocks; ++b, blocks += info.block_bytes)
    for (uint32_t k = 0; k < info.block_values; ++k) *out++ = block_value(t, blocks, k);
}

}  // namespace vkamp::quant
