// What attention_mma.comp and attention_mma_grad.comp share: the fused
// attention of attention_fused*.comp on 16 x 16 fp16 fragments (tensor
// cores with the ".coopmat" build, fragment_emulated.glsl elsewhere). Every
// performance choice is a specialization constant (engine/src/ops/
// attention_mma.cpp picks them; VKAMP_ATTENTION_TILES sweeps them).
//
// A workgroup is WARPS warps of LANES invocations; warp w owns 16 rows of
// the workgroup's BR = 16 WARPS (queries in the forward and dq, keys in dk
// and dv) and runs over tiles of TILE positions of the other side, staged
// in shared memory as fp16 rows of the head, zero-padded to DP = the head
// size rounded up to 16 (so any head size works; the padding adds 0 x 0).
// Positions and head elements past the end are staged as 0, never left
// stale: a stale NaN times a 0 would reach a real row.
//
// Causality by 16 x 16 chunk: with rows and tiles on multiples of 16, a
// warp's chunk of 16 positions on the other side lies wholly inside the
// causal triangle (every product on tensor cores), wholly outside it
// (skipped), or on the diagonal, whose masked pairs must not multiply at
// all (0 x NaN is NaN): the kernels add it in plain fp32 fmas.
// Include after the buffer qkv and the push block p, with the kernel's
// macros HS_SIZE and FS_SIZE (the shared arrays hs, fp16, and fs, fp32)
// and ACCUMULATORS (the fragments a warp holds), written in the constants
// below; engine/src/ops/attention_mma.cpp's shared_bytes() mirrors them.
#ifndef VKAMP_ATTENTION_MMA_GLSL
#define VKAMP_ATTENTION_MMA_GLSL

layout(constant_id = 0) const uint WARPS = 4u;
layout(constant_id = 1) const uint TILE = 32u;   // a multiple of 16
layout(constant_id = 2) const uint HEAD = 64u;   // the head size
layout(constant_id = 3) const uint KEYS = 0u;    // attention_mma_grad: 0 dq (and D), 1 dk and dv
layout(constant_id = 4) const uint LANES = 32u;  // invocations a warp (the subgroup size on tensor cores)
layout(local_size_x_id = 5) in;                  // WARPS x LANES

const uint BR = 16u * WARPS, CHUNKS = TILE / 16u;
const uint DP = (HEAD + 15u) / 16u * 16u;
const uint HS = DP + 8u;    // row stride of staged head rows (fp16; 16-byte aligned, banks shifted)
const uint PS = TILE + 8u;  // row stride of a warp's probabilities or dS over one tile (fp16)
const uint SS = 36u;        // row stride of a warp's two 16 x 16 fp32 blocks (backward)

shared float16_t hs[HS_SIZE];
shared float fs[FS_SIZE];
const uint NACC = ACCUMULATORS;

#include "attention_layout.glsl"

// The value a staging call copies: part 0-2 of qkv, or 3: dy (declared by
// attention_mma_grad.comp only).
float staged_value(uint part, uint t, uint e);

// Rows [first, first + count) of `part` into hs from `at` on (row stride
// HS), the positions up to `last` only; zeros elsewhere. Every invocation
// takes part: call in uniform control flow, between barriers.
void stage_rows(uint at, uint part, uint first, uint count, uint last) {
  for (uint i = gl_LocalInvocationIndex; i < count * DP; i += gl_WorkGroupSize.x) {
    const uint r = i / DP, e = i % DP, t = first + r;
    hs[at + r * HS + e] = t <= last && e < HEAD ? float16_t(staged_value(part, t, e)) : float16_t(0.0);
  }
}

// s plus row x of the 16 x 16 block A at a_at (row stride a_ld) times
// column y of B, over the k that row x keeps (keep 0: every k; 1: k <= x;
// 2: k >= x), in fp32 fmas in k order. B's element (k, y) lies at
// b_at + k b_ld + y, or at b_at + y b_ld + k when b_cols. Both fragment
// backends sum this way: the emulation every element, tensor cores the
// diagonal chunk (a masked product would still take 0 x NaN).
float frag_row_dot(float s, uint x, uint y, uint a_at, uint a_ld, uint b_at, uint b_ld, bool b_cols, uint keep) {
  for (uint q = 0u; q < 16u; ++q)
    if (keep == 0u || (keep == 1u ? q <= x : q >= x))
      s = fma(float(hs[a_at + x * a_ld + q]), float(hs[b_cols ? b_at + y * b_ld + q : b_at + q * b_ld + y]), s);
  return s;
}

#if defined(VKAMP_COOPMAT)
#include "fragment_coopmat.glsl"
#else
#include "fragment_emulated.glsl"
#endif

#endif
