#version 450
#extension GL_GOOGLE_include_directive : require
// Rotary position embedding and the grouped-query layout (ops/rope.hpp):
// forward, one invocation per element of a part's block of the attention
// row (query head h reads its part's head h / (heads / part_heads));
// backward, one per element of the part's gradient, summing over the query
// heads that read it. fp32 math, one rounding per output.
#include "types.glsl"
#include "elementwise.glsl"

layout(constant_id = 0) const uint BACKWARD = 0;

layout(std430, binding = 0) readonly buffer Table { float table[]; };  // cos, then sin
layout(std430, binding = 1) buffer Part { sfp part[]; };  // forward: read; backward: its gradient
layout(std430, binding = 2) buffer Qkv { sfp qkv[]; };    // forward: written; backward: dqkv, read
#include "vkamp/gpu_abi/rope.h"

// The pair (j, j +- half) of a head of row r turned by +-angle: x * cos -+
// partner * sin on the first half, x * cos +- partner * sin on the second.
float turned(float x, float partner, uint r, uint j, float direction) {
  if (p.rotate == 0u) return x;
  uint half_dim = p.head_dim / 2u;
  uint f = j < half_dim ? j : j - half_dim;
  uint at = (p.first_position + r % p.seq) * half_dim + f;
  float c = table[at], s = table[p.table_positions * half_dim + at] * direction;
  return j < half_dim ? x * c - partner * s : x * c + partner * s;
}

void main() {
  uint hd = p.head_dim, half_dim = hd / 2u;
  uint row_cols = 3u * p.heads * hd, part_cols = p.part_heads * hd, group = p.heads / p.part_heads;
  if (BACKWARD == 0u) {
    FOR_EACH_ELEMENT(i, p.rows * p.heads * hd) {
      uint r = i / (p.heads * hd), c = i % (p.heads * hd);
      uint j = c % hd;
      uint src = r * part_cols + (c / hd / group) * hd + j;
      uint partner = j < half_dim ? src + half_dim : src - half_dim;
      qkv[r * row_cols + p.part_offset + c] = f2sfp(turned(sfp2f(part[src]), sfp2f(part[partner]), r, j, 1.0));
    }
  } else {
    FOR_EACH_ELEMENT(i, p.rows * part_cols) {
      uint r = i / part_cols, c = i % part_cols;
      uint j = c % hd;
      float sum = 0.0;
      for (uint g = 0u; g < group; ++g) {
        uint at = r * row_cols + p.part_offset + ((c / hd) * group + g) * hd + j;
        uint partner = j < half_dim ? at + half_dim : at - half_dim;
        sum += turned(sfp2f(qkv[at]), sfp2f(qkv[partner]), r, j, -1.0);
      }
      part[i] = f2sfp(p.accumulate != 0u ? sfp2f(part[i]) + sum : sum);
    }
  }
}
