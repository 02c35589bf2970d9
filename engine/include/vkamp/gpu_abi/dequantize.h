// dequantize.comp (ops::dequantize): out[i] = element i of a tensor in one
// of ggml's types (shaders/common/dequant.glsl's quant_value), as fp32 bits.
// Built once; the type is the specialization constant QTYPE (constant_id 20).
#ifndef VKAMP_INTERFACE_DEQUANTIZE_H
#define VKAMP_INTERFACE_DEQUANTIZE_H
#include "macros.h"

VKAMP_PUSH(DequantizePush)
  uint n;
VKAMP_PUSH_END(DequantizePush, p, 4)

VKAMP_SHADER_ONE_BUILD(DequantizeShader, dequantize, 2, DequantizePush)  // blocks, out

#endif
