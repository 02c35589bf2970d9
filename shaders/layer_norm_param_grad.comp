#version 450
#extension GL_GOOGLE_include_directive : require
// LayerNorm's parameter gradients, first pass: for one chunk of rows
// (workgroup y), the column sums
//   partial_gamma[chunk][c] = sum_r dy[r, c] * xhat[r, c],  partial_beta[chunk][c] = sum_r dy[r, c],
// one invocation per column adding the chunk's rows in order in fp32;
// gemm_reduce.comp then adds the chunks in order into dgamma and dbeta.
// Deterministic (a fixed split, no atomics), and no invocation loops over
// more than chunk_rows rows: lavapipe leaves a loop after 65535 iterations,
// silently, so one loop over every row dropped the rows past that (and two
// nested loops fared no better: the budget seems to be shared).
#include "types.glsl"

layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer X { sfp x[]; };
layout(std430, binding = 1) readonly buffer Stats { vec2 mean_rstd[]; };
layout(std430, binding = 2) readonly buffer DY { sfp dy[]; };
layout(std430, binding = 3) writeonly buffer PartialGamma { float partial_gamma[]; };
layout(std430, binding = 4) writeonly buffer PartialBeta { float partial_beta[]; };
#include "vkamp/gpu_abi/layer_norm_param_grad.h"

void main() {
  uint col = gl_GlobalInvocationID.x, chunk = gl_WorkGroupID.y;
  if (col >= p.cols) return;
  float sg = 0.0, sb = 0.0;
  uint end = min(p.rows, (chunk + 1u) * p.chunk_rows);
  for (uint r = chunk * p.chunk_rows; r < end; ++r) {
    vec2 st = mean_rstd[r];
    float g = sfp2f(dy[r * p.cols + col]);
    sg += g * ((sfp2f(x[r * p.cols + col]) - st.x) * st.y);
    sb += g;
  }
  partial_gamma[chunk * p.cols + col] = sg;
  if (p.centered != 0u) partial_beta[chunk * p.cols + col] = sb;
}
