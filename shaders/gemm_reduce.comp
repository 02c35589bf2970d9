#version 450
#extension GL_GOOGLE_include_directive : require
// The second pass of a split-k GEMM (gemm.comp with SPLIT_K = 1):
// c[i] = sum over z of partial[z][i] (+ c[i] when accumulate), the partials
// added in z order in fp32 and rounded once, so the result is deterministic.
#include "types.glsl"

layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer Partial { float partial[]; };
layout(std430, binding = 1) buffer C { sfp c[]; };
layout(push_constant) uniform Push { uint count; uint splits; uint accumulate; } p;

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.count; i += gl_NumWorkGroups.x * 256u) {
    float v = 0.0;
    for (uint z = 0u; z < p.splits; ++z) v += partial[z * p.count + i];
    if (p.accumulate != 0u) v += sfp2f(c[i]);
    c[i] = f2sfp(v);
  }
}
