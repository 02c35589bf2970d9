// The quantizers' shared pieces: ggml's rounding helpers and the fp16
// scales, and the K-quant block quantizers (quantize_k.cpp).
#pragma once
#include <bit>
#include <cstdint>

#include "vkamp/quant/ggml_type.hpp"

namespace vkamp::quant::detail {

// ggml's nearest_int: round to nearest even through the fp32 adder (adding
// 1.5 * 2^23 leaves the integer in the low mantissa bits).
inline int nearest_int(float f) {
  const float v = f + 12582912.f;
  return int(std::bit_cast<uint32_t>(v) & 0x007FFFFFu) - 0x00400000;
}

// The fp16 bits of a block's scale; std::invalid_argument naming `t` when
// it overflows fp16 (the block's values are too large for the type).
uint16_t scale_fp16(GgmlType t, float scale);

// One block of 256 values each.
void quantize_q4_k_block(const float* x, uint8_t* block);
void quantize_q5_k_block(const float* x, uint8_t* block);
void quantize_q6_k_block(const float* x, uint8_t* block);

}  // namespace vkamp::quant::detail
