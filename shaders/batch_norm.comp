#version 450
#extension GL_GOOGLE_include_directive : require
// BatchNorm's forward over a rows x c matrix (NHWC: a channel is a column),
//   y = (x - mean[ch]) * rstd[ch] * weight[ch] + bias[ch],  rstd = 1 / sqrt(var + eps),
// in fp32 whatever the storage format, rounded once to it. mean and var are
// the batch's (training: batch_norm_stats + batch_norm_merge) or the running
// buffers (eval); they, weight and bias are fp32 (the masters), each read
// from its element offset `*_at` (the op binds fp32 operands from an
// aligned base, so mean and var may be the two halves of one stats block).
// One invocation per channel and chunk of rows (workgroup y), as the
// reductions run (batch_norm_stats.comp): each reads its channel's four
// values once, and neighbouring invocations touch neighbouring columns of
// a row. (An invocation per element would find its channel by i % c, a
// divide per element that lavapipe runs scalar: twice the time of this.)
#include "types.glsl"

layout(local_size_x_id = 0) in;  // channels per workgroup (the host's choice)

layout(std430, binding = 0) readonly buffer X { sfp x[]; };
layout(std430, binding = 1) readonly buffer Mean { float mean[]; };
layout(std430, binding = 2) readonly buffer Variance { float variance[]; };
layout(std430, binding = 3) readonly buffer Weight { float weight[]; };
layout(std430, binding = 4) readonly buffer Bias { float bias[]; };
layout(std430, binding = 5) writeonly buffer Y { sfp y[]; };
#include "vkamp/gpu_abi/batch_norm.h"

void main() {
  uint ch = gl_GlobalInvocationID.x;
  if (ch >= p.c) return;
  uint first = gl_WorkGroupID.y * p.chunk_rows, last = min(first + p.chunk_rows, p.rows);
  float mu = mean[p.mean_at + ch], rstd = inversesqrt(variance[p.var_at + ch] + p.eps);
  float w = weight[p.weight_at + ch], b = bias[p.bias_at + ch];
  for (uint r = first; r < last; ++r) {
    uint i = r * p.c + ch;
    float xhat = (sfp2f(x[i]) - mu) * rstd;
    y[i] = f2sfp(xhat * w + b);
  }
}
