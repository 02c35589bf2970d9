#version 450
#extension GL_GOOGLE_include_directive : require
// The causal softmax of attention, in place: each row of `rows` holds the
// scaled scores s[j] = q_t . k_j / sqrt(hd) of one query position t
// (row r is position t = seq - queries + r % queries: the push block's
// header), and becomes
//   P[j] = exp(s[j] - max) / sum_{j' <= t} exp(s[j'] - max) for j <= t, 0 for j > t.
// In fp32 whatever the storage format; the scores past t (the mask) are
// never read, so whatever the GEMM left there cannot leak in, and P is
// exactly 0 there. A workgroup or an invocation per row (row_sum.glsl); a
// NaN among the kept scores makes the whole row NaN through the sum.
#include "types.glsl"
#include "row_sum.glsl"

layout(std430, binding = 0) buffer Scores { sfp s[]; };
#include "vkamp/gpu_abi/attention_softmax.h"

void main() {
  uint lid = row_lane();
  FOR_EACH_ROW(r, p.rows) {
    uint base = r * p.seq, keys = p.seq - p.queries + r % p.queries + 1u;
    float m = uintBitsToFloat(0xFF800000u);  // -inf
    for (uint j = lid; j < keys; j += kRowThreads) m = max(m, sfp2f(s[base + j]));
    m = row_max(m);
    float sum = 0.0;
    for (uint j = lid; j < keys; j += kRowThreads) sum += exp(sfp2f(s[base + j]) - m);
    float inv = 1.0 / row_sum(vec2(sum, 0.0)).x;
    // Each invocation reads only the scores it then overwrites.
    for (uint j = lid; j < p.seq; j += kRowThreads)
      s[base + j] = f2sfp(j < keys ? exp(sfp2f(s[base + j]) - m) * inv : 0.0);
  }
}
