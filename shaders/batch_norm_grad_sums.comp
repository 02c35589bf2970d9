#version 450
#extension GL_GOOGLE_include_directive : require
// BatchNorm's backward column sums, first pass: for one chunk of rows
// (workgroup y) and one channel per invocation, in fp32,
//   partial[chunk] = {sum_r dy[r, ch], sum_r dy[r, ch] * xhat[r, ch]},
// xhat = (x - mean) * rstd from the forward's statistics. Chunked as
// batch_norm_stats.comp; batch_norm_merge.comp (SUMS) adds the chunks in order.
#include "types.glsl"

layout(local_size_x_id = 0) in;  // channels per workgroup (the host's choice)
layout(std430, binding = 0) readonly buffer X { sfp x[]; };
layout(std430, binding = 1) readonly buffer Mean { float mean[]; };
layout(std430, binding = 2) readonly buffer Variance { float variance[]; };
layout(std430, binding = 3) readonly buffer DY { sfp dy[]; };
layout(std430, binding = 4) writeonly buffer Partial { float partial[]; };  // [chunk][sum dy c, sum dy xhat c]
#include "vkamp/gpu_abi/batch_norm_grad_sums.h"

void main() {
  uint ch = gl_GlobalInvocationID.x, chunk = gl_WorkGroupID.y;
  if (ch >= p.c) return;
  uint first = chunk * p.chunk_rows, last = min(first + p.chunk_rows, p.rows);
  float mu = mean[p.mean_at + ch], rstd = inversesqrt(variance[p.var_at + ch] + p.eps);
  float sg = 0.0, sgx = 0.0;
  for (uint r = first; r < last; ++r) {
    float g = sfp2f(dy[r * p.c + ch]);
    sg += g;
    sgx += g * ((sfp2f(x[r * p.c + ch]) - mu) * rstd);
  }
  partial[chunk * 2u * p.c + ch] = sg;
  partial[chunk * 2u * p.c + p.c + ch] = sgx;
}
