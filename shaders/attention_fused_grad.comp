#version 450
#extension GL_GOOGLE_include_directive : require
// Causal attention backward, fused (FlashAttention-2's backward, without
// atomics): two passes that recompute the probabilities
// P[t][j] = exp(alpha q_t.k_j - lse_t) from q, k and the forward's saved
// logsumexp, tile by tile, never storing them.
//   KEYS = 0: a workgroup takes ROWS queries of one (example, head), an
//     invocation each, over the key/value tiles up to its last query:
//     D_t = dy_t . y_t (saved in dsum for the second pass), then
//     dS = P (dy_t . v_j - D_t) and dq_t = alpha sum_{j <= t} dS k_j.
//   KEYS = 1: a workgroup takes ROWS keys, an invocation each, over the
//     tiles of queries from its first key on (queries, their dy, lse and D
//     staged in shared memory): dv_j = sum_{t >= j} P dy_t and
//     dk_j = alpha sum_{t >= j} dS q_t.
// Every sum is fp32 in a fixed order, each result rounded once to the
// format (added to dqkv's old value first when accumulating): the same
// bits on every run. The masked pairs (j > t) are skipped, never read.
// NaN: recomputed_probability makes P NaN where the score or the row's lse
// is not finite (attention_tiles.glsl); a NaN in v, dy or y reaches the
// results through the sums, as in the definition.
#include "types.glsl"

layout(std430, binding = 0) readonly buffer QKV { sfp qkv[]; };
layout(std430, binding = 1) readonly buffer Y { sfp y[]; };
layout(std430, binding = 2) readonly buffer DY { sfp dy[]; };
layout(std430, binding = 3) buffer DQKV { sfp dqkv[]; };
layout(std430, binding = 4) readonly buffer Lse { float lse[]; };
layout(std430, binding = 5) buffer DSum { float dsum[]; };
#include "vkamp/gpu_abi/attention_fused.h"
#include "attention_tiles.glsl"

layout(constant_id = 3) const uint KEYS = 0u;

shared float tile_lse[TILE];
shared float tile_dsum[TILE];

// The gradient g of part (0 q, 1 k, 2 v) at position t, element e.
void store_grad(uint part, uint t, uint e, float g) {
  const uint i = qkv_at(part, t, e);
  dqkv[i] = f2sfp(p.accumulate != 0u ? sfp2f(dqkv[i]) + g : g);
}

void query_pass() {
  const uint first_row = gl_WorkGroupID.x * ROWS, t = min(first_row + gl_LocalInvocationID.x, p.seq - 1u);
  const bool in_range = first_row + gl_LocalInvocationID.x < p.seq;
  const uint last = min(first_row + ROWS, p.seq) - 1u;
  float q[HEAD], g[HEAD], dq[HEAD];
  float d = 0.0;
  for (uint e = 0u; e < HEAD; ++e) {
    q[e] = sfp2f(qkv[qkv_at(0u, t, e)]);
    g[e] = sfp2f(dy[row_at(t, e)]);
    d += g[e] * sfp2f(y[row_at(t, e)]);
    dq[e] = 0.0;
  }
  const float row_lse = lse[stat_at(t)];
  for (uint j0 = 0u; j0 <= last; j0 += TILE) {
    stage_keys_values(j0, last);
    const uint keys = in_range && t >= j0 ? min(TILE, t + 1u - j0) : 0u;
    for (uint c = 0u; c < TILE; ++c) {
      if (c < keys) {
        float s = 0.0, dp = 0.0;
        for (uint e = 0u; e < HEAD; ++e) {
          s += q[e] * tile_a[c * HEAD + e];
          dp += g[e] * tile_b[c * HEAD + e];
        }
        const float ds = recomputed_probability(s * p.alpha, row_lse) * (dp - d);
        for (uint e = 0u; e < HEAD; ++e) dq[e] += ds * tile_a[c * HEAD + e];
      }
    }
  }
  if (!in_range) return;
  dsum[stat_at(t)] = d;
  for (uint e = 0u; e < HEAD; ++e) store_grad(0u, t, e, dq[e] * p.alpha);
}

void key_pass() {
  const uint first_key = gl_WorkGroupID.x * ROWS, j = min(first_key + gl_LocalInvocationID.x, p.seq - 1u);
  const bool in_range = first_key + gl_LocalInvocationID.x < p.seq;
  float k[HEAD], v[HEAD], dk[HEAD], dv[HEAD];
  for (uint e = 0u; e < HEAD; ++e) {
    k[e] = sfp2f(qkv[qkv_at(1u, j, e)]);
    v[e] = sfp2f(qkv[qkv_at(2u, j, e)]);
    dk[e] = 0.0;
    dv[e] = 0.0;
  }
  // Query tiles aligned to TILE, from the one holding the first key.
  for (uint t0 = first_key / TILE * TILE; t0 < p.seq; t0 += TILE) {
    barrier();
    for (uint k = 0u; k < kStagedEach; ++k) {
      const uint i = gl_LocalInvocationID.x + k * ROWS, t = t0 + i / HEAD, e = i % HEAD;
      if (i < TILE * HEAD && t < p.seq) {
        tile_a[i] = sfp2f(qkv[qkv_at(0u, t, e)]);
        tile_b[i] = sfp2f(dy[row_at(t, e)]);
      }
    }
    for (uint k = 0u; k < (TILE + ROWS - 1u) / ROWS; ++k) {
      const uint c = gl_LocalInvocationID.x + k * ROWS;
      if (c < TILE && t0 + c < p.seq) {
        tile_lse[c] = lse[stat_at(t0 + c)];
        tile_dsum[c] = dsum[stat_at(t0 + c)];
      }
    }
    barrier();
    // This key's queries of the tile: max(t0, j) .. min(t0 + TILE, seq) - 1.
    const uint from = in_range ? max(t0, j) - t0 : TILE, to = min(TILE, p.seq - t0);
    for (uint c = 0u; c < TILE; ++c) {
      if (c >= from && c < to) {
        float s = 0.0, dp = 0.0;
        for (uint e = 0u; e < HEAD; ++e) {
          s += tile_a[c * HEAD + e] * k[e];
          dp += tile_b[c * HEAD + e] * v[e];
        }
        const float pr = recomputed_probability(s * p.alpha, tile_lse[c]);
        const float ds = pr * (dp - tile_dsum[c]);
        for (uint e = 0u; e < HEAD; ++e) {
          dv[e] += pr * tile_b[c * HEAD + e];
          dk[e] += ds * tile_a[c * HEAD + e];
        }
      }
    }
  }
  if (!in_range) return;
  for (uint e = 0u; e < HEAD; ++e) {
    store_grad(1u, j, e, dk[e] * p.alpha);
    store_grad(2u, j, e, dv[e]);
  }
}

void main() {
  if (KEYS != 0u) key_pass();
  else query_pass();
}
