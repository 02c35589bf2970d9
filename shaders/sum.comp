#version 450
#extension GL_GOOGLE_include_directive : require
// out[index] = factor * sum(x[0..n)), fp32, one workgroup, fixed order.
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Out { float outv[]; };
#include "vkamp/gpu_abi/sum.h"

shared float acc[256];

void main() {
  uint lid = gl_LocalInvocationID.x;
  float s = 0.0;
  for (uint i = lid; i < p.n; i += 256u) s += x[i];
  acc[lid] = s;
  barrier();
  for (uint w = 128u; w > 0u; w >>= 1) {
    if (lid < w) acc[lid] += acc[lid + w];
    barrier();
  }
  if (lid == 0u) outv[p.index] = p.factor * acc[0];
}
