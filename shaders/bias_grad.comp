#version 450
#extension GL_GOOGLE_include_directive : require
// db[c] = sum_r dy[r, c] (+ db[c]), one thread per column, fp32 sum.
// Neighbouring threads read neighbouring columns, so each row read coalesces.
#include "types.glsl"

layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer DY { sfp dy[]; };
layout(std430, binding = 1) buffer DB { sfp db[]; };
layout(push_constant) uniform Push { uint rows; uint cols; uint accumulate; } p;

void main() {
  uint col = gl_GlobalInvocationID.x;
  if (col >= p.cols) return;
  float s = 0.0;
  for (uint r = 0u; r < p.rows; ++r) s += sfp2f(dy[r * p.cols + col]);
  if (p.accumulate != 0u) s += sfp2f(db[col]);
  db[col] = f2sfp(s);
}
