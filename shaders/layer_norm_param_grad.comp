#version 450
#extension GL_GOOGLE_include_directive : require
// LayerNorm's parameter gradients, column sums over the rows:
//   dgamma[c] = sum_r dy[r, c] * xhat[r, c],  dbeta[c] = sum_r dy[r, c]
// (+ the old values when accumulate_gamma / accumulate_beta). One invocation per column, summing
// the rows in order in fp32, as bias_grad.comp: deterministic, no atomics,
// and neighbouring invocations read neighbouring columns of each row.
#include "types.glsl"

layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer X { sfp x[]; };
layout(std430, binding = 1) readonly buffer Stats { vec2 mean_rstd[]; };
layout(std430, binding = 2) readonly buffer DY { sfp dy[]; };
layout(std430, binding = 3) buffer DGamma { sfp dgamma[]; };
layout(std430, binding = 4) buffer DBeta { sfp dbeta[]; };
layout(push_constant) uniform Push { uint rows; uint cols; uint accumulate_gamma; uint accumulate_beta; } p;

void main() {
  uint col = gl_GlobalInvocationID.x;
  if (col >= p.cols) return;
  float sg = 0.0, sb = 0.0;
  for (uint r = 0u; r < p.rows; ++r) {
    vec2 st = mean_rstd[r];
    float g = sfp2f(dy[r * p.cols + col]);
    sg += g * ((sfp2f(x[r * p.cols + col]) - st.x) * st.y);
    sb += g;
  }
  if (p.accumulate_gamma != 0u) sg += sfp2f(dgamma[col]);
  if (p.accumulate_beta != 0u) sb += sfp2f(dbeta[col]);
  dgamma[col] = f2sfp(sg);
  dbeta[col] = f2sfp(sb);
}
