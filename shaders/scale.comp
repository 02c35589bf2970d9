#version 450
#extension GL_GOOGLE_include_directive : require
// y = x * factor * {1, s, 1/s} with s read from a GPU buffer (the loss
// scale, or one group's factor of per-layer scaling: s[p.index]), in fp32: 2^16 and its reciprocal are not fp16 values.
#include "types.glsl"
#include "elementwise.glsl"

layout(constant_id = 0) const uint SCALE_BY = 0;  // 0 constant, 1 s, 2 1/s
layout(std430, binding = 0) readonly buffer X { sfp x[]; };
layout(std430, binding = 1) writeonly buffer Y { sfp y[]; };
layout(std430, binding = 2) readonly buffer S { float s[]; };
#include "vkamp/gpu_abi/scale.h"

void main() {
  float f = p.factor;
  if (SCALE_BY == 1u) f *= s[p.index];
  if (SCALE_BY == 2u) f /= s[p.index];
  FOR_EACH_ELEMENT(i, p.n) y[i] = f2sfp(sfp2f(x[i]) * f);
}
