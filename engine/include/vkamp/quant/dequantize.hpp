// ggml's blocks to floats, bit for bit as ggml's dequantize_row_* computes them.
#pragma once
#include <cstdint>

#include "vkamp/quant/ggml_type.hpp"

namespace vkamp::quant {

// `n` values (a multiple of the type's block) from `blocks`.
void dequantize_row(GgmlType t, const uint8_t* blocks, float* out, uint64_t n);

}  // namespace vkamp::quant
