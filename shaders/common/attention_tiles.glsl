// What attention_fused.comp and attention_fused_grad.comp share: the tile
// sizes and the tiles staged in shared memory (fp32 whatever the storage
// format); attention_layout.glsl has the layouts. Include after the
// buffers qkv and the push block p.
#ifndef VKAMP_ATTENTION_TILES_GLSL
#define VKAMP_ATTENTION_TILES_GLSL

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

#include "attention_layout.glsl"

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

#endif
