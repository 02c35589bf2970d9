// rope.comp (ops::rope_forward/backward): one of q, k or v and its block of
// the attention row q' | k' | v', either way.
#ifndef VKAMP_INTERFACE_ROPE_H
#define VKAMP_INTERFACE_ROPE_H
#include "macros.h"

VKAMP_PUSH(RopePush)
  uint rows, seq, first_position, table_positions;
  uint part_heads;  // heads of the part (q: heads; k, v: kv_heads)
  uint heads, head_dim;
  uint part_offset; // its first column in the attention row (0, heads hd or 2 heads hd)
  uint rotate;      // q and k turn; v is only repeated
  uint accumulate;  // backward: add to the part's gradient
VKAMP_PUSH_END(RopePush, p, 40)

VKAMP_SHADER(RopeShader, rope, 3, RopePush)  // table, part (or its gradient), qkv (or dqkv)

#endif
