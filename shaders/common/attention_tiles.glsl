// What attention_fused.comp and attention_fused_grad.comp share: the tile
// sizes, where a head's q, k and v lie in qkv, the tiles staged in shared
// memory (fp32 whatever the storage format) and the recomputed probability.
// Include after the buffers qkv and the push block p.
#ifndef VKAMP_ATTENTION_TILES_GLSL
#define VKAMP_ATTENTION_TILES_GLSL
#include "nonfinite.glsl"

// Specialization constants (engine/src/ops/attention_fused.cpp picks them
// per device): ROWS rows of a workgroup, one invocation each (queries in the
// forward and dQ, keys in dK/dV); TILE rows per tile staged in shared memory
// (keys and values, or queries and output gradients); HEAD the head size,
// so every per-row array has a constant length.
// No loop is unrolled by request: with the loops over HEAD and TILE
// unrolled ([[unroll]]), lavapipe took minutes to compile a head size of
// 16 and more than 7 at 64. So an invocation runs about
// seq x (2 HEAD + 2) loop iterations, which lavapipe counts over all loops
// together and past 65535 silently leaves them: the host refuses such
// shapes on CPU drivers (attention_fused.cpp).
layout(constant_id = 0) const uint ROWS = 32u;
layout(constant_id = 1) const uint TILE = 32u;
layout(constant_id = 2) const uint HEAD = 16u;
layout(local_size_x_id = 0) in;

// Each invocation's share of staging a tile of TILE x HEAD values.
const uint kStagedEach = (TILE * HEAD + ROWS - 1u) / ROWS;

shared float tile_a[TILE * HEAD];
shared float tile_b[TILE * HEAD];

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

// The keys and values of positions [first, first + TILE) into tile_a and
// tile_b, those up to `last` only (past it the tiles keep stale values no
// row reads). Call in uniform control flow; the barriers before and after
// make the previous tile's readers finish and this tile's values visible.
void stage_keys_values(uint first, uint last) {
  barrier();
  for (uint k = 0u; k < kStagedEach; ++k) {
    const uint i = gl_LocalInvocationID.x + k * ROWS, t = first + i / HEAD, e = i % HEAD;
    if (i < TILE * HEAD && t <= last) {
      tile_a[i] = sfp2f(qkv[qkv_at(1u, t, e)]);
      tile_b[i] = sfp2f(qkv[qkv_at(2u, t, e)]);
    }
  }
  barrier();
}

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
