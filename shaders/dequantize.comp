#version 450
#extension GL_GOOGLE_include_directive : require
// out[i] = quant_value(i) for i < n: a whole quantized tensor to fp32,
// stored as bits (no float store on the way), for tests and for loading.
layout(std430, binding = 0) readonly buffer Q { uint qwords[]; };
layout(std430, binding = 1) writeonly buffer Out { uint outv[]; };
#include "vkamp/gpu_abi/dequantize.h"
#define QWORD(w) qwords[w]
#include "dequant.glsl"
#include "elementwise.glsl"

void main() {
  FOR_EACH_ELEMENT(i, p.n) outv[i] = floatBitsToUint(quant_value(i));
}
