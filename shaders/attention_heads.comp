#version 450
#extension GL_GOOGLE_include_directive : require
// Between attention's token layout and its head layout, both ways:
//   tokens: [batch, seq, parts * channels], part p in columns [p C, (p+1) C)
//           (qkv with parts = 3, y and dy with parts = 1);
//   heads:  part p at p * part_stride, each [batch, heads, seq, hd],
//           hd = channels / heads, so every (example, head) is one
//           contiguous seq x hd matrix for the batched GEMMs.
// MERGE = 0 splits tokens into heads; MERGE = 1 merges heads into tokens,
// adding to what the tokens held when accumulate is set (dqkv).
#include "types.glsl"
#include "fastdiv.glsl"
#include "elementwise.glsl"

layout(constant_id = 0) const uint MERGE = 0;

layout(std430, binding = 0) buffer Tokens { sfp tokens[]; };
layout(std430, binding = 1) buffer Heads { sfp heads[]; };
layout(push_constant) uniform Push {
  uvec2 by_part, by_hd, by_seq, by_heads;  // fast_div divisors of the four below
  uint part_n;  // batch * seq * channels: the elements of one part
  uint hd, seq, heads;
  uint count;  // parts * part_n
  uint channels, parts, part_stride, accumulate;
} p;

void main() {
  FOR_EACH_ELEMENT(i, p.count) {
    // i walks the head layout: part, then (b, h, t, e).
    uint part = fast_div(i, p.by_part);
    uint r = i - part * p.part_n;
    uint row = fast_div(r, p.by_hd);  // (b heads + h) seq + t
    uint e = r - row * p.hd;
    uint bh = fast_div(row, p.by_seq);
    uint t = row - bh * p.seq;
    uint b = fast_div(bh, p.by_heads);
    uint h = bh - b * p.heads;
    uint tok = ((b * p.seq + t) * p.parts + part) * p.channels + h * p.hd + e;
    uint head = part * p.part_stride + r;
    if (MERGE == 0u) {
      heads[head] = tokens[tok];
    } else {
      float v = sfp2f(heads[head]);
      if (p.accumulate != 0u) v += sfp2f(tokens[tok]);
      tokens[tok] = f2sfp(v);
    }
  }
}
