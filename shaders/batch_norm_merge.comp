#version 450
#extension GL_GOOGLE_include_directive : require
// BatchNorm's reductions over rows, second pass: one invocation per channel
// takes the chunks' fp32 partials ([chunk][2c], chunk k of
// min(chunk_rows, rows - k chunk_rows) rows) in chunk order, so every run
// gives the same bits, and writes 2c floats at out[out_at]:
//   SUMS = 0 (batch_norm_stats.comp's partials {mean_k, M2_k}): two passes
//     over the chunks, as the chunks made two over their rows. The mean is
//     the first chunk's plus the chunks' weighted deviations from it,
//     mean = mean_0 + sum_k n_k (mean_k - mean_0) / rows, so only the small
//     deviations are summed (nearby means subtract exactly) and |mean| is
//     rounded about once, however many chunks; then M2 = sum_k M2_k +
//     n_k (mean_k - mean)^2 (Chan et al.'s merge, all chunks at once);
//     out = {mean, M2 / rows}, the biased variance. A running merge
//     (mean += delta n_k / n) would round |mean| once per chunk: at x ~ 1000
//     over a GPU's ~1000 chunks, 1e-3 of absolute error.
//     The two loops together stay under lavapipe's 65535 iterations (the
//     host keeps chunks below 32768).
//   SUMS = 1 (batch_norm_grad_sums.comp's {sum dy, sum dy xhat}): the plain sums.
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint SUMS = 0;
layout(std430, binding = 0) readonly buffer Partial { float partial[]; };
layout(std430, binding = 1) writeonly buffer Out { float result[]; };
#include "vkamp/gpu_abi/batch_norm_merge.h"

void main() {
  uint ch = gl_GlobalInvocationID.x;
  if (ch >= p.c) return;
  uint stride = 2u * p.c;
  if (SUMS != 0u) {
    vec2 s = vec2(0.0);
    for (uint k = 0u; k < p.chunks; ++k) s += vec2(partial[k * stride + ch], partial[k * stride + p.c + ch]);
    result[p.out_at + ch] = s.x;
    result[p.out_at + p.c + ch] = s.y;
    return;
  }
  float shift = partial[ch], deviations = 0.0;
  for (uint k = 0u; k < p.chunks; ++k) {
    float nk = float(min(p.chunk_rows, p.rows - k * p.chunk_rows));
    deviations += nk * (partial[k * stride + ch] - shift);
  }
  float mean = shift + deviations / float(p.rows), m2 = 0.0;
  for (uint k = 0u; k < p.chunks; ++k) {
    float nk = float(min(p.chunk_rows, p.rows - k * p.chunk_rows)), d = partial[k * stride + ch] - mean;
    m2 += partial[k * stride + p.c + ch] + nk * (d * d);
  }
  result[p.out_at + ch] = mean;
  result[p.out_at + p.c + ch] = m2 / float(p.rows);
}
