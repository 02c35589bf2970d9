#version 450
#extension GL_GOOGLE_include_directive : require
// BatchNorm's input gradient, elementwise in fp32 from the column sums
// (batch_norm_grad_sums) and the forward's batch statistics:
//   dx = weight rstd (dy - sum dy / N - xhat sum(dy xhat) / N)   (+ dx when accumulate),
// N = rows, which is weight rstd / N (N dy - sum dy - xhat sum dy xhat).
// With N = 1 both sides cancel exactly (sum dy = dy, xhat = 0): dx = 0.
#include "types.glsl"
#include "elementwise.glsl"

layout(std430, binding = 0) readonly buffer X { sfp x[]; };
layout(std430, binding = 1) readonly buffer Mean { float mean[]; };
layout(std430, binding = 2) readonly buffer Variance { float variance[]; };
layout(std430, binding = 3) readonly buffer Weight { float weight[]; };
layout(std430, binding = 4) readonly buffer DY { sfp dy[]; };
layout(std430, binding = 5) readonly buffer Sums { float sums[]; };  // {sum dy c, sum dy xhat c} at sums_at
layout(std430, binding = 6) buffer DX { sfp dx[]; };
#include "interface/batch_norm_grad.h"

void main() {
  float inv_n = 1.0 / float(p.rows);
  FOR_EACH_ELEMENT(i, p.n) {
    uint ch = i % p.c;
    float rstd = inversesqrt(variance[p.var_at + ch] + p.eps);
    float xhat = (sfp2f(x[i]) - mean[p.mean_at + ch]) * rstd;
    float mean_dy = sums[p.sums_at + ch] * inv_n, mean_dy_xhat = sums[p.sums_at + p.c + ch] * inv_n;
    float v = weight[p.weight_at + ch] * rstd * (sfp2f(dy[i]) - mean_dy - xhat * mean_dy_xhat);
    if (p.accumulate != 0u) v += sfp2f(dx[i]);
    dx[i] = f2sfp(v);
  }
}
