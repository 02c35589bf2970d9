#version 450
#extension GL_GOOGLE_include_directive : require
// db[c] = sum_r dy[r, c] (+ db[c]), one thread per column, fp32 sum.
// Neighbouring threads read neighbouring columns, so each row read coalesces.
// Rows come in chunks of chunk_rows, one chunk per workgroup row (y):
// Mesa's llvmpipe ends any shader loop after 65,535 iterations, so no loop
// may run over all rows. With one chunk the sum goes straight to db; with
// several (PARTIALS), each chunk's fp32 sum goes to partial[chunk][c] and
// gemm_reduce.comp adds them in chunk order, so every run gives the same
// bits. The host picks chunk_rows per device type (GPUs need many chunks to
// fill), so a GPU and a CPU driver may round differently.
#include "types.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint PARTIALS = 0;
layout(std430, binding = 0) readonly buffer DY { sfp dy[]; };
layout(std430, binding = 1) buffer DB { sfp db[]; };
layout(std430, binding = 2) writeonly buffer Partial { float partial[]; };  // unused without PARTIALS
#include "vkamp/gpu_abi/bias_grad.h"

void main() {
  uint col = gl_GlobalInvocationID.x;
  if (col >= p.cols) return;
  uint first = gl_WorkGroupID.y * p.chunk_rows;
  uint last = min(first + p.chunk_rows, p.rows);
  float s = 0.0;
  for (uint r = first; r < last; ++r) s += sfp2f(dy[r * p.cols + col]);
  if (PARTIALS != 0u) {
    partial[gl_WorkGroupID.y * p.cols + col] = s;
    return;
  }
  if (p.accumulate != 0u) s += sfp2f(db[col]);
  db[col] = f2sfp(s);
}
