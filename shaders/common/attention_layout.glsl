// What both fused attention families (attention_tiles.glsl: one invocation
// per row; attention_mma.glsl: 16 x 16 fragments on tensor cores) share:
// where a head's q, k and v lie in qkv, the row statistics, and the
// probability recomputed in the backward. Include after the buffers qkv,
// the push block p and the specialization constant HEAD (the head size).
#ifndef VKAMP_ATTENTION_LAYOUT_GLSL
#define VKAMP_ATTENTION_LAYOUT_GLSL
#include "nonfinite.glsl"

// Element e of part (0 q, 1 k, 2 v) of position t of this workgroup's
// (example, head) in qkv.
uint qkv_at(uint part, uint t, uint e) {
  const uint b = gl_WorkGroupID.y / p.heads, h = gl_WorkGroupID.y % p.heads;
  return (b * p.seq + t) * 3u * p.channels + part * p.channels + h * HEAD + e;
}
// Element e of query row r (of the last `queries` positions) in y or dy.
uint row_at(uint r, uint e) {
  const uint b = gl_WorkGroupID.y / p.heads, h = gl_WorkGroupID.y % p.heads;
  return (b * p.queries + r) * p.channels + h * HEAD + e;
}
// Query row r's entry in lse and dsum.
uint stat_at(uint r) { return gl_WorkGroupID.y * p.queries + r; }

// The running maximum before any key.
const float kLowest = -3.4028235e38;

// exp without an inf argument: arguments below -126 give 0 either way.
float exp_finite(float x) { return exp(max(x, -126.0)); }

// The backward's probability P = exp(s - lse), recomputed from the score
// and the row's logsumexp: NaN (by the exponent bits, never by the
// driver's exp of NaN) where either is not finite, so a poisoned row
// poisons every gradient it reaches.
float recomputed_probability(float s, float lse) {
  return is_nonfinite(s) || is_nonfinite(lse) ? quiet_nan() : exp_finite(s - lse);
}

#endif
