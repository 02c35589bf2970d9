#version 450
#extension GL_GOOGLE_include_directive : require
// BatchNorm's input gradient, elementwise in fp32 from the column sums
// (batch_norm_grad_sums) and the forward's batch statistics:
//   dx = weight rstd (dy - sum dy / N - xhat sum(dy xhat) / N)   (+ dx when accumulate),
// N = rows, which is weight rstd / N (N dy - sum dy - xhat sum dy xhat).
// With N = 1 both sides cancel exactly (sum dy = dy, xhat = 0): dx = 0.
// One invocation per channel and chunk of rows (workgroup y), as
// batch_norm.comp: the channel's values are read once.
#include "types.glsl"

layout(local_size_x_id = 0) in;  // channels per workgroup (the host's choice)

layout(std430, binding = 0) readonly buffer X { sfp x[]; };
layout(std430, binding = 1) readonly buffer Mean { float mean[]; };
layout(std430, binding = 2) readonly buffer Variance { float variance[]; };
layout(std430, binding = 3) readonly buffer Weight { float weight[]; };
layout(std430, binding = 4) readonly buffer DY { sfp dy[]; };
layout(std430, binding = 5) readonly buffer Sums { float sums[]; };  // {sum dy c, sum dy xhat c} at sums_at
layout(std430, binding = 6) buffer DX { sfp dx[]; };
#include "vkamp/gpu_abi/batch_norm_grad.h"

void main() {
  uint ch = gl_GlobalInvocationID.x;
  if (ch >= p.c) return;
  uint first = gl_WorkGroupID.y * p.chunk_rows, last = min(first + p.chunk_rows, p.rows);
  float inv_n = 1.0 / float(p.rows);
  float mu = mean[p.mean_at + ch], rstd = inversesqrt(variance[p.var_at + ch] + p.eps);
  float mean_dy = sums[p.sums_at + ch] * inv_n, mean_dy_xhat = sums[p.sums_at + p.c + ch] * inv_n;
  float k = weight[p.weight_at + ch] * rstd;
  for (uint r = first; r < last; ++r) {
    uint i = r * p.c + ch;
    float xhat = (sfp2f(x[i]) - mu) * rstd;
    float v = k * (sfp2f(dy[i]) - mean_dy - xhat * mean_dy_xhat);
    if (p.accumulate != 0u) v += sfp2f(dx[i]);
    dx[i] = f2sfp(v);
  }
}
