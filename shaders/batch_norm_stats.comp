#version 450
#extension GL_GOOGLE_include_directive : require
// BatchNorm's batch statistics, first pass: for one chunk of rows
// (workgroup y) and one channel per invocation, the chunk's mean and sum of
// squared deviations M2, in fp32, by a corrected two-pass sum (Chan, Golub
// and LeVeque): m = sum(x) / n, then d = x - m (exact where m is near x:
// Sterbenz), mean = m + sum(d) / n, M2 = sum(d^2) - sum(d)^2 / n. Nothing
// cancels at large offsets (x ~ 1000), where E[x^2] - E[x]^2 would lose
// every digit. batch_norm_merge.comp then merges the chunks in order.
// No invocation loops over more than chunk_rows rows (lavapipe leaves a
// loop after 65535 iterations, silently), and no atomics: the same bits on
// every run.
#include "types.glsl"
#include "nonfinite.glsl"

layout(local_size_x_id = 0) in;  // channels per workgroup (the host's choice)
layout(std430, binding = 0) readonly buffer X { sfp x[]; };
layout(std430, binding = 1) writeonly buffer Partial { float partial[]; };  // [chunk][mean c, M2 c]
#include "vkamp/gpu_abi/batch_norm_stats.h"

void main() {
  uint ch = gl_GlobalInvocationID.x, chunk = gl_WorkGroupID.y;
  if (ch >= p.c) return;
  uint first = chunk * p.chunk_rows, last = min(first + p.chunk_rows, p.rows);
  float n = float(last - first);
  float s = 0.0;
  for (uint r = first; r < last; ++r) s += sfp2f(x[r * p.c + ch]);
  float m = s / n;
  float sd = 0.0, sdd = 0.0;
  for (uint r = first; r < last; ++r) {
    float d = sfp2f(x[r * p.c + ch]) - m;
    sd += d;
    sdd += d * d;
  }
  // sum(d^2) >= sum(d)^2 / n exactly; rounding may take M2 a hair below 0
  // when every d is alike. An inf or NaN stays (no comparison decides it).
  float m2 = sdd - sd * (sd / n);
  if (!is_nonfinite(m2)) m2 = max(m2, 0.0);
  partial[chunk * 2u * p.c + ch] = m + sd / n;
  partial[chunk * 2u * p.c + p.c + ch] = m2;
}
