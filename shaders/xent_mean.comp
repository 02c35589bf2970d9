#version 450
#extension GL_GOOGLE_include_directive : require
// out[index] = sum(row_loss[0..rows)) / targets, and row_loss[rows] =
// targets, the rows whose label is a target (at least 1, so a batch of no
// targets has loss 0 and gradient 0). The backward divides by the same
// count. One workgroup, a fixed order: deterministic.
#include "vkamp/gpu_abi/not_target.h"
layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer RowLoss { float row_loss[]; };
layout(std430, binding = 1) readonly buffer Labels { uint labels[]; };
layout(std430, binding = 2) buffer Out { float outv[]; };
#include "vkamp/gpu_abi/xent_mean.h"

shared float acc[256];
shared uint count[256];

void main() {
  uint lid = gl_LocalInvocationID.x;
  float s = 0.0;
  uint n = 0u;
  for (uint i = lid; i < p.rows; i += 256u) {
    s += row_loss[i];
    n += (labels[i] & VKAMP_NOT_TARGET) == 0u ? 1u : 0u;
  }
  acc[lid] = s;
  count[lid] = n;
  barrier();
  for (uint w = 128u; w > 0u; w >>= 1) {
    if (lid < w) {
      acc[lid] += acc[lid + w];
      count[lid] += count[lid + w];
    }
    barrier();
  }
  if (lid == 0u) {
    float targets = float(max(count[0], 1u));
    outv[p.index] = acc[0] * (1.0 / targets);
    row_loss[p.rows] = targets;
  }
}
