#version 450
#extension GL_GOOGLE_include_directive : require
// BatchNorm's parameter gradients from the fp32 column sums
// (batch_norm_grad_sums): dweight = sum dy * xhat, dbias = sum dy, each
// rounded once to the storage format (after adding its old value when its
// flag is set).
#include "types.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Sums { float sums[]; };  // {sum dy c, sum dy xhat c} at sums_at
layout(std430, binding = 1) buffer DWeight { sfp dweight[]; };
layout(std430, binding = 2) buffer DBias { sfp dbias[]; };
#include "vkamp/gpu_abi/batch_norm_param_grad.h"

void main() {
  uint ch = gl_GlobalInvocationID.x;
  if (ch >= p.c) return;
  float w = sums[p.sums_at + p.c + ch], b = sums[p.sums_at + ch];
  if (p.accumulate_weight != 0u) w += sfp2f(dweight[ch]);
  if (p.accumulate_bias != 0u) b += sfp2f(dbias[ch]);
  dweight[ch] = f2sfp(w);
  dbias[ch] = f2sfp(b);
}
