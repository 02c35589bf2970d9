#version 450
#extension GL_GOOGLE_include_directive : require
// Causal attention forward, fused (FlashAttention-2's loop): a workgroup
// takes ROWS query rows of one (example, head), an invocation each, and
// runs over the key/value tiles up to its last query, staged in shared
// memory. Each row keeps its scores of one tile, a running maximum m, a
// running sum l of exp(s - m) and its output o, all fp32; a new tile's
// larger maximum rescales l and o by exp(m_old - m_new). The seq x seq
// probabilities never reach memory: the backward recomputes them from the
// saved lse = m + log(l) (attention_fused_grad.comp).
//
// Causal: tiles past the workgroup's last query are never staged; a row
// visits the keys up to its own position only (skipped, not weighed 0, so
// whatever lies past the diagonal cannot leak in). NaN: a score that is
// not finite (a NaN or inf in q_t or k_j) makes row t's whole output and
// its lse NaN, decided by the exponent bits; a NaN in v_j reaches the
// channels of the rows that weigh it through the sums. Scores are kept
// out of the running maximum when not finite, so no comparison sees NaN.
#include "types.glsl"

layout(std430, binding = 0) readonly buffer QKV { sfp qkv[]; };
layout(std430, binding = 1) writeonly buffer Y { sfp y[]; };
layout(std430, binding = 2) writeonly buffer Lse { float lse[]; };
#include "vkamp/gpu_abi/attention_fused.h"
#include "attention_tiles.glsl"

void main() {
  const uint first_row = gl_WorkGroupID.x * ROWS, r = first_row + gl_LocalInvocationID.x;
  const bool in_range = r < p.queries;
  const uint offset = p.seq - p.queries;  // row r is position offset + r
  const uint t = offset + min(r, p.queries - 1u), last = offset + min(first_row + ROWS, p.queries) - 1u;
  float q[HEAD], o[HEAD];
  for (uint e = 0u; e < HEAD; ++e) {
    q[e] = sfp2f(qkv[qkv_at(0u, t, e)]);
    o[e] = 0.0;
  }
  float m = kLowest, l = 0.0;
  bool poisoned = false;
  for (uint j0 = 0u; j0 <= last; j0 += TILE) {
    stage_keys_values(j0, last);
    // This row's keys of the tile: j0 .. min(j0 + TILE, t + 1) - 1.
    const uint keys = in_range && t >= j0 ? min(TILE, t + 1u - j0) : 0u;
    float s[TILE];
    float m_new = m;
    for (uint c = 0u; c < TILE; ++c) {
      s[c] = kLowest;
      if (c < keys) {
        float d = 0.0;
        for (uint e = 0u; e < HEAD; ++e) d += q[e] * tile_a[c * HEAD + e];
        d *= p.alpha;
        if (is_nonfinite(d)) poisoned = true;
        else s[c] = d;
        m_new = max(m_new, s[c]);
      }
    }
    if (keys > 0u) {
      const float scale = exp_finite(m - m_new);
      l *= scale;
      for (uint e = 0u; e < HEAD; ++e) o[e] *= scale;
      for (uint c = 0u; c < TILE; ++c) {
        if (c < keys) {
          const float pc = exp_finite(s[c] - m_new);
          l += pc;
          for (uint e = 0u; e < HEAD; ++e) o[e] += pc * tile_b[c * HEAD + e];
        }
      }
      m = m_new;
    }
  }
  if (!in_range) return;
  const float inv = 1.0 / l;
  for (uint e = 0u; e < HEAD; ++e) y[row_at(r, e)] = f2sfp(poisoned ? quiet_nan() : o[e] * inv);
  lse[stat_at(r)] = poisoned ? quiet_nan() : m + log(l);
}
