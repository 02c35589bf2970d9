#version 450
#extension GL_GOOGLE_include_directive : require
// Causal attention backward on 16 x 16 fragments: attention_fused_grad.comp's
// two passes (no atomics; the probabilities recomputed from the saved lse)
// with every product on tensor cores (common/attention_mma.glsl has the
// tiling and causality by chunk).
//   KEYS = 0: warp w takes 16 queries; per key tile and chunk of 16 keys,
//     S = Q K^T and dP = dY V^T into fs, then lanes 0-15 (a row each)
//     dS = P (dP - D) rounded to fp16 into hs; after the tile,
//     dQ += dS K in DP / 16 accumulators kept over every tile. D = dy . y
//     (fp32, from the stored y) is saved in dsum for the key pass.
//   KEYS = 1: warp w takes 16 keys; per query tile and chunk of 16 queries,
//     S^T = K Q^T and dP^T = V dY^T, then P^T and dS^T into hs; after the
//     tile, dV += P^T dY and dK += dS^T Q.
// dS and P enter the second products as fp16 (the materialized path stores
// them in the format too); every sum is fp32. Each gradient is rounded once
// to the format (added to dqkv's old value first when accumulating).
#include "types.glsl"

layout(std430, binding = 0) readonly buffer QKV { sfp qkv[]; };
layout(std430, binding = 1) readonly buffer Y { sfp y[]; };
layout(std430, binding = 2) readonly buffer DY { sfp dy[]; };
layout(std430, binding = 3) buffer DQKV { sfp dqkv[]; };
layout(std430, binding = 4) readonly buffer Lse { float lse[]; };
layout(std430, binding = 5) buffer DSum { float dsum[]; };
#include "vkamp/gpu_abi/attention_fused.h"

// hs: this side's two staged operands (BR rows each: Q and dY, or K and V)
// | the other side's two (TILE rows each: K and V, or Q and dY) | each
// warp's 16 x TILE dS (and, KEYS = 1, P^T).
// fs: each warp's 16 x SS block (two 16 x 16 fragments) | KEYS = 1: the
// query tile's lse and D.
#define HS_SIZE ((2u * BR + 2u * TILE) * HS + (1u + KEYS) * WARPS * 16u * PS)
#define FS_SIZE (WARPS * 16u * SS + 2u * TILE)
#define ACCUMULATORS (2u + (1u + KEYS) * (DP / 16u))
#include "attention_mma.glsl"

float staged_value(uint part, uint t, uint e) { return sfp2f(part == 3u ? dy[row_at(t, e)] : qkv[qkv_at(part, t, e)]); }

const uint MINE_A = 0u, MINE_B = BR * HS, OTHER_A = 2u * BR * HS, OTHER_B = OTHER_A + TILE * HS;
const uint G0 = OTHER_B + TILE * HS;  // the warps' dS blocks, then (KEYS = 1) their P^T blocks
const uint TILE_LSE = WARPS * 16u * SS, TILE_D = TILE_LSE + TILE;
const uint ACC_S = 0u, ACC_DP = 1u, ACC_G = 2u, ACC_G2 = 2u + DP / 16u;

// The gradient g of part (0 q, 1 k, 2 v) at position t, element e.
void store_grad(uint part, uint t, uint e, float g) {
  const uint i = qkv_at(part, t, e);
  dqkv[i] = f2sfp(p.accumulate != 0u ? sfp2f(dqkv[i]) + g : g);
}

// S (or S^T) and dP (or dP^T) of this warp's rows by the 16 staged rows of
// the other side at `other` (row index within the tile), into the warp's fs block.
void scores_and_dp(uint w, uint other) {
  frag_zero(ACC_S);
  frag_zero(ACC_DP);
  for (uint kk = 0u; kk < DP; kk += 16u) {
    frag_mma(ACC_S, MINE_A + 16u * w * HS + kk, HS, OTHER_A + other * HS + kk, HS, true);
    frag_mma(ACC_DP, MINE_B + 16u * w * HS + kk, HS, OTHER_B + other * HS + kk, HS, true);
  }
  frag_store(ACC_S, 16u * w * SS, SS);
  frag_store(ACC_DP, 16u * w * SS + 16u, SS);
}

// Accumulators first..first + DP/16 (dQ, dK or dV) times `scale`, to
// part's gradient at this warp's 16 positions from r0 on, a fragment at a
// time through the warp's fs block. Uniform control flow.
void store_grads(uint w, uint r0, uint first, uint part, float scale) {
  for (uint d = 0u; d < DP / 16u; ++d) {
    frag_store(first + d, 16u * w * SS, SS);
    warp_sync();
    for (uint e = lane_id(); e < 256u; e += LANES) {
      const uint x = e / 16u, col = 16u * d + e % 16u;
      if (r0 + x < p.seq && col < HEAD) store_grad(part, r0 + x, col, fs[16u * w * SS + x * SS + e % 16u] * scale);
    }
    warp_sync();
  }
}

void query_pass(uint w, uint lane) {
  const uint first_row = gl_WorkGroupID.x * BR, r0 = first_row + 16u * w, t = r0 + lane;
  const uint last = min(first_row + BR, p.seq) - 1u;
  const uint gw = G0 + 16u * w * PS, sw = 16u * w * SS;
  stage_rows(MINE_A, 0u, first_row, BR, p.seq - 1u);
  stage_rows(MINE_B, 3u, first_row, BR, p.seq - 1u);
  // Lanes 0-15: row t's D = dy . y and lse.
  float d_row = 0.0, lse_row = 0.0;
  if (lane < 16u && t < p.seq) {
    for (uint e = 0u; e < HEAD; ++e) d_row += sfp2f(dy[row_at(t, e)]) * sfp2f(y[row_at(t, e)]);
    lse_row = lse[stat_at(t)];
    dsum[stat_at(t)] = d_row;
  }
  for (uint d = 0u; d < DP / 16u; ++d) frag_zero(ACC_G + d);
  for (uint j0 = 0u; j0 <= last; j0 += TILE) {
    barrier();
    stage_rows(OTHER_A, 1u, j0, TILE, last);
    stage_rows(OTHER_B, 2u, j0, TILE, last);
    barrier();
    for (uint c = 0u; c < CHUNKS; ++c) {
      const uint kc = j0 + 16u * c;
      if (kc <= r0) scores_and_dp(w, 16u * c);
      warp_sync();
      if (lane < 16u)
        for (uint q = 0u; q < 16u; ++q) {
          float ds = 0.0;
          if (kc <= r0 && t < p.seq && kc + q <= t) {
            const float pr = recomputed_probability(fs[sw + lane * SS + q] * p.alpha, lse_row);
            ds = pr * (fs[sw + lane * SS + 16u + q] - d_row);
          }
          hs[gw + lane * PS + 16u * c + q] = f2sfp(ds);
        }
      warp_sync();
    }
    // dQ += dS K: the chunks below the diagonal on tensor cores, the diagonal one masked.
    for (uint c = 0u; c < CHUNKS; ++c) {
      const uint kc = j0 + 16u * c;
      for (uint d = 0u; d < DP / 16u; ++d) {
        const uint a = gw + 16u * c, b = OTHER_A + 16u * c * HS + 16u * d;
        if (kc < r0) frag_mma(ACC_G + d, a, PS, b, HS, false);
        else if (kc == r0) frag_mma_masked(ACC_G + d, a, PS, b, HS, false, 1u, sw);
      }
    }
  }
  store_grads(w, r0, ACC_G, 0u, p.alpha);
}

void key_pass(uint w, uint lane) {
  const uint first_key = gl_WorkGroupID.x * BR, k0 = first_key + 16u * w, j = k0 + lane;
  const uint gw = G0 + 16u * w * PS, pw = G0 + WARPS * 16u * PS + 16u * w * PS, sw = 16u * w * SS;
  stage_rows(MINE_A, 1u, first_key, BR, p.seq - 1u);
  stage_rows(MINE_B, 2u, first_key, BR, p.seq - 1u);
  for (uint d = 0u; d < 2u * DP / 16u; ++d) frag_zero(ACC_G + d);
  // Query tiles aligned to TILE, from the one holding the first key.
  for (uint t0 = first_key / TILE * TILE; t0 < p.seq; t0 += TILE) {
    barrier();
    stage_rows(OTHER_A, 0u, t0, TILE, p.seq - 1u);
    stage_rows(OTHER_B, 3u, t0, TILE, p.seq - 1u);
    for (uint c = gl_LocalInvocationIndex; c < TILE; c += gl_WorkGroupSize.x) {
      fs[TILE_LSE + c] = t0 + c < p.seq ? lse[stat_at(t0 + c)] : 0.0;
      fs[TILE_D + c] = t0 + c < p.seq ? dsum[stat_at(t0 + c)] : 0.0;
    }
    barrier();
    for (uint c = 0u; c < CHUNKS; ++c) {
      const uint qc = t0 + 16u * c;
      const bool live = qc >= k0 && qc < p.seq;  // some query of the chunk sees some key of the warp
      if (live) scores_and_dp(w, 16u * c);
      warp_sync();
      if (lane < 16u)
        for (uint q = 0u; q < 16u; ++q) {
          float pr = 0.0, ds = 0.0;
          if (live && j < p.seq && qc + q < p.seq && qc + q >= j) {
            pr = recomputed_probability(fs[sw + lane * SS + q] * p.alpha, fs[TILE_LSE + 16u * c + q]);
            ds = pr * (fs[sw + lane * SS + 16u + q] - fs[TILE_D + 16u * c + q]);
          }
          hs[pw + lane * PS + 16u * c + q] = f2sfp(pr);
          hs[gw + lane * PS + 16u * c + q] = f2sfp(ds);
        }
      warp_sync();
    }
    // dV += P^T dY and dK += dS^T Q: below the diagonal on tensor cores
    // (every query after every key), the diagonal chunk masked (query >= key).
    for (uint c = 0u; c < CHUNKS; ++c) {
      const uint qc = t0 + 16u * c;
      for (uint d = 0u; d < DP / 16u; ++d) {
        const uint ap = pw + 16u * c, ag = gw + 16u * c;
        const uint bq = OTHER_A + 16u * c * HS + 16u * d, bg = OTHER_B + 16u * c * HS + 16u * d;
        if (qc > k0 && qc < p.seq) {
          frag_mma(ACC_G + d, ap, PS, bg, HS, false);
          frag_mma(ACC_G2 + d, ag, PS, bq, HS, false);
        } else if (qc == k0) {
          frag_mma_masked(ACC_G + d, ap, PS, bg, HS, false, 2u, sw);
          frag_mma_masked(ACC_G2 + d, ag, PS, bq, HS, false, 2u, sw);
        }
      }
    }
  }
  store_grads(w, k0, ACC_G2, 1u, p.alpha);
  store_grads(w, k0, ACC_G, 2u, 1.0);
}

void main() {
  if (KEYS != 0u) key_pass(warp_id(), lane_id());
  else query_pass(warp_id(), lane_id());
}
