#version 450
#extension GL_GOOGLE_include_directive : require
// Stage one of a sum of squares: partial[wg] = sum over this workgroup's
// strided share of (x - t)^2, in fp32. sum.comp adds the partials. The
// order is fixed, so the result is deterministic. inf and NaN propagate.
#include "types.glsl"
#include "elementwise.glsl"

layout(constant_id = 0) const uint HAS_TARGET = 0;
layout(std430, binding = 0) readonly buffer X { sfp x[]; };
layout(std430, binding = 1) readonly buffer T { sfp t[]; };
layout(std430, binding = 2) writeonly buffer Partial { float partial[]; };
#include "vkamp/gpu_abi/sumsq.h"

shared float acc[256];

void main() {
  float s = 0.0;
  FOR_EACH_ELEMENT(i, p.n) {
    float d = sfp2f(x[i]);
    if (HAS_TARGET != 0u) d -= sfp2f(t[i]);
    s += d * d;
  }
  uint lid = gl_LocalInvocationID.x;
  acc[lid] = s;
  barrier();
  for (uint w = 128u; w > 0u; w >>= 1) {
    if (lid < w) acc[lid] += acc[lid + w];
    barrier();
  }
  if (lid == 0u) partial[gl_WorkGroupID.x] = acc[0];
}
