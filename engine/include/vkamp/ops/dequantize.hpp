// A tensor in one of ggml's types (GGUF weights) to fp32 on the GPU, bit
// for bit as vkamp::quant::dequantize_row: dequantize.comp over
// shaders/common/dequant.glsl, the function every shader that reads
// quantized weights includes.
#pragma once
#include <cstdint>
#include <vector>

#include "vkamp/buffer.hpp"
#include "vkamp/quant/ggml_type.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::ops {

// dequant.glsl's specialization constant QTYPE (the ggml type id).
inline constexpr uint32_t kQuantTypeConstantId = 20;

// `constants` (ids 0..k-1, KernelSpec) with QTYPE set to `t`: the ids in
// between, if any, are zero (a pipeline ignores ids its shader lacks).
std::vector<uint32_t> with_quant_type(std::vector<uint32_t> constants, quant::GgmlType t);

// out[i] = element i of the n values (a whole number of blocks) at
// `blocks`, as fp32. `blocks` must hold the blocks' bytes rounded up to
// whole 32-bit words (the shader reads words), from a 4-byte aligned offset.
void dequantize(Sequence& seq, quant::GgmlType t, BufferView blocks, BufferView out, uint32_t n);

}  // namespace vkamp::ops
