#version 450
#extension GL_GOOGLE_include_directive : require
// Causal attention forward on 16 x 16 fragments: attention_fused.comp's
// online softmax (FlashAttention-2) with both products, S = Q K^T and P V,
// on tensor cores (common/attention_mma.glsl has the tiling and causality
// by chunk). Per key tile, warp w:
//  1. S for its 16 query rows, one accumulator per 16 keys, into fs;
//  2. lanes 0-15, one row each: the running max m and sum l in fp32, the
//     tile's P = exp(s - m) rounded to fp16 into hs (0 where masked), and
//     the factor exp(m_old - m_new) that rescales the row's output;
//  3. P V over the chunks below the diagonal, one accumulator per 16
//     channels, into fs;
//  4. every lane: its share of the 16 x DP output, kept in registers in a
//     known layout (a cooperative matrix has none, so it cannot be scaled
//     by row): o = o x factor + (P V), plus the diagonal chunk's kept
//     products in fp32.
// The output is o / l; lse = m + log(l) for the backward, as
// attention_fused.comp's (so either backward serves either forward). The
// NaN rules are attention_fused.comp's: a non-finite score poisons its
// row (exponent bits), a NaN in v reaches the rows that weigh it.
#include "types.glsl"

layout(std430, binding = 0) readonly buffer QKV { sfp qkv[]; };
layout(std430, binding = 1) writeonly buffer Y { sfp y[]; };
layout(std430, binding = 2) writeonly buffer Lse { float lse[]; };
#include "vkamp/gpu_abi/attention_fused.h"

// hs: Q (BR rows) | K, V (TILE rows each) | each warp's 16 x TILE P.
// fs: each warp's 16 x FW block (S, then P V) | each warp's 16 row factors.
#define FW ((TILE > DP ? TILE : DP) + 4u)
#define HS_SIZE ((BR + 2u * TILE) * HS + WARPS * 16u * PS)
#define FS_SIZE (WARPS * 16u * FW + WARPS * 16u)
#define ACCUMULATORS (CHUNKS > DP / 16u ? CHUNKS : DP / 16u)
#include "attention_mma.glsl"

float staged_value(uint part, uint t, uint e) { return sfp2f(qkv[qkv_at(part, t, e)]); }

const uint K0 = BR * HS, V0 = K0 + TILE * HS, P0 = V0 + TILE * HS, F0 = WARPS * 16u * FW;
const uint O_PER_LANE = 16u * DP / LANES;  // output elements e = lane + LANES i (row e / DP)

void main() {
  const uint w = warp_id(), lane = lane_id();
  const uint first_row = gl_WorkGroupID.x * BR, r0 = first_row + 16u * w;  // queries == seq here
  const uint last = min(first_row + BR, p.seq) - 1u;
  const uint qw = 16u * w * HS, pw = P0 + 16u * w * PS, fw = 16u * w * FW, factor = F0 + 16u * w;
  stage_rows(0u, 0u, first_row, BR, p.seq - 1u);
  float o[O_PER_LANE];
  for (uint i = 0u; i < O_PER_LANE; ++i) o[i] = 0.0;
  // Lanes 0-15: row r0 + lane's statistics.
  const uint t = r0 + lane;
  float m = kLowest, l = 0.0;
  bool poisoned = false;
  for (uint j0 = 0u; j0 <= last; j0 += TILE) {
    barrier();
    stage_rows(K0, 1u, j0, TILE, last);
    stage_rows(V0, 2u, j0, TILE, last);
    barrier();
    // 1. S, chunks above the diagonal left 0 (never read).
    for (uint c = 0u; c < CHUNKS; ++c) frag_zero(c);
    for (uint kk = 0u; kk < DP; kk += 16u)
      for (uint c = 0u; c < CHUNKS; ++c)
        if (j0 + 16u * c <= r0) frag_mma(c, qw + kk, HS, K0 + 16u * c * HS + kk, HS, true);
    for (uint c = 0u; c < CHUNKS; ++c) frag_store(c, fw + 16u * c, FW);
    warp_sync();
    // 2. The row's softmax over the tile's keys up to its own position.
    if (lane < 16u) {
      const uint keys = t < p.seq && t >= j0 ? min(TILE, t + 1u - j0) : 0u;
      float m_new = m;
      for (uint c = 0u; c < keys; ++c) {
        const float s = fs[fw + lane * FW + c] * p.alpha;
        if (is_nonfinite(s)) poisoned = true;
        else m_new = max(m_new, s);
      }
      const float scale = exp_finite(m - m_new);
      l *= scale;
      for (uint c = 0u; c < TILE; ++c) {
        const float s = fs[fw + lane * FW + c] * p.alpha;
        const float pc = c < keys && !is_nonfinite(s) ? exp_finite(s - m_new) : 0.0;
        l += pc;
        hs[pw + lane * PS + c] = f2sfp(pc);
      }
      m = m_new;
      fs[factor + lane] = scale;
    }
    warp_sync();
    // 3. P V over the chunks wholly below the diagonal.
    for (uint d = 0u; d < DP / 16u; ++d) frag_zero(d);
    for (uint c = 0u; c < CHUNKS; ++c)
      if (j0 + 16u * c < r0)
        for (uint d = 0u; d < DP / 16u; ++d) frag_mma(d, pw + 16u * c, PS, V0 + 16u * c * HS + 16u * d, HS, false);
    for (uint d = 0u; d < DP / 16u; ++d) frag_store(d, fw + 16u * d, FW);
    warp_sync();
    // 4. Rescale and add; the diagonal chunk (keys r0..r0+15, when in this
    // tile) by its kept pairs only.
    const bool diagonal = r0 >= j0 && r0 < j0 + TILE;
    const uint dc = r0 - j0;
    for (uint i = 0u; i < O_PER_LANE; ++i) {
      const uint e = lane + LANES * i, x = e / DP, d = e % DP;
      float v = fma(o[i], fs[factor + x], fs[fw + x * FW + d]);
      if (diagonal)
        for (uint q = 0u; q <= x; ++q) v = fma(float(hs[pw + x * PS + dc + q]), float(hs[V0 + (dc + q) * HS + d]), v);
      o[i] = v;
    }
  }
  // 1 / l per row (NaN for a poisoned one) to every lane.
  warp_sync();
  if (lane < 16u) {
    fs[factor + lane] = poisoned ? quiet_nan() : 1.0 / l;
    if (t < p.seq) lse[stat_at(t)] = poisoned ? quiet_nan() : m + log(l);
  }
  warp_sync();
  for (uint i = 0u; i < O_PER_LANE; ++i) {
    const uint e = lane + LANES * i, x = e / DP, d = e % DP;
    if (r0 + x < p.seq && d < HEAD) y[row_at(r0 + x, d)] = f2sfp(o[i] * fs[factor + x]);
  }
}
