#version 450
#extension GL_GOOGLE_include_directive : require
// BatchNorm's forward over a rows x c matrix (NHWC: a channel is a column),
//   y = (x - mean[ch]) * rstd[ch] * weight[ch] + bias[ch],  rstd = 1 / sqrt(var + eps),
// in fp32 whatever the storage format, rounded once to it. mean and var are
// the batch's (training: batch_norm_stats + batch_norm_merge) or the running
// buffers (eval); they, weight and bias are fp32 (the masters), each read
// from its element offset `*_at` (the op binds fp32 operands from an
// aligned base, so mean and var may be the two halves of one stats block).
#include "types.glsl"
#include "elementwise.glsl"

layout(std430, binding = 0) readonly buffer X { sfp x[]; };
layout(std430, binding = 1) readonly buffer Mean { float mean[]; };
layout(std430, binding = 2) readonly buffer Variance { float variance[]; };
layout(std430, binding = 3) readonly buffer Weight { float weight[]; };
layout(std430, binding = 4) readonly buffer Bias { float bias[]; };
layout(std430, binding = 5) writeonly buffer Y { sfp y[]; };
#include "interface/batch_norm.h"

void main() {
  FOR_EACH_ELEMENT(i, p.n) {
    uint ch = i % p.c;
    float rstd = inversesqrt(variance[p.var_at + ch] + p.eps);
    float xhat = (sfp2f(x[i]) - mean[p.mean_at + ch]) * rstd;
    y[i] = f2sfp(xhat * weight[p.weight_at + ch] + bias[p.bias_at + ch]);
  }
}
