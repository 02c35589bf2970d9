// ggml's tensor blocks to fp32, bit for bit as ggml's dequantize_row_*
// (ggml-quants.c) computes them: the same fp16 conversion and the same
// float operations in the same order, never contracted into an fma. The
// GPU's mirror is shaders/common/dequant.glsl; tests compare the two and
// both against ggml's own output (tests/quant/).
#pragma once
#include <cstdint>

#include "vkamp/quant/ggml_type.hpp"

namespace vkamp::quant {

// ggml's fp16 -> fp32 (GGML_FP16_TO_FP32): exact, subnormals kept, a NaN
// made quiet as ggml's conversion makes it.
float ggml_fp16_to_f32(uint16_t h);

// The `k`-th value (k < block_values) of the block at `block`.
float block_value(GgmlType t, const uint8_t* block, uint32_t k);

// out[0..n) from the blocks at `blocks`; n a multiple of the type's block
// values (std::invalid_argument otherwise).
void dequantize_row(GgmlType t, const uint8_t* blocks, float* out, uint64_t n);

}  // namespace vkamp::quant
