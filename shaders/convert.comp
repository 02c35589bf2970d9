#version 450
#extension GL_GOOGLE_include_directive : require
// fp32 <-> storage format. DIRECTION 0: fp32 -> sfp, 1: sfp -> fp32.
#include "types.glsl"
#include "elementwise.glsl"

layout(constant_id = 0) const uint DIRECTION = 0;
layout(std430, binding = 0) buffer F32 { float f32[]; };
layout(std430, binding = 1) buffer Sfp { sfp s[]; };
#include "vkamp/gpu_abi/convert.h"

void main() {
  FOR_EACH_ELEMENT(i, p.n) {
    if (DIRECTION == 0u) s[i] = f2sfp(p.accumulate != 0u ? f32[i] + sfp2f(s[i]) : f32[i]);
    else f32[i] = p.accumulate != 0u ? f32[i] + sfp2f(s[i]) : sfp2f(s[i]);
  }
}
