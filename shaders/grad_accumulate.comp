#version 450
#extension GL_GOOGLE_include_directive : require
// Gradient accumulation in fp32: after each micro-batch's backward has
// written its 16-bit gradient (where underflow happens), add it into the
// fp32 sum; the first micro-batch copies. Summing in the 16-bit buffer
// instead would round every partial sum to the format, M roundings.
#include "types.glsl"
#include "elementwise.glsl"

layout(std430, binding = 0) readonly buffer Grads { sfp g[]; };
layout(std430, binding = 1) buffer GradSum { float gsum[]; };
#include "vkamp/gpu_abi/grad_accumulate.h"

void main() {
  FOR_EACH_ELEMENT(i, p.n) {
    float v = sfp2f(g[i]);
    gsum[i] = p.first != 0u ? v : gsum[i] + v;
  }
}
