#version 450
#extension GL_GOOGLE_include_directive : require
// The embedding's parameter gradients, each a sum of dy rows grouped by a key:
//   TOKENS = 1: dwte[v, c] = sum over rows r with ids[r] == v of dy[r, c]
//   TOKENS = 0: dwpe[t, c] = sum over rows r with r % T == t of dy[r, c]
// (+ the old value when accumulate). One invocation per (key, channel),
// adding the matching rows in row order in fp32: deterministic and free of
// atomics however often an id repeats. For tokens every invocation scans all
// N ids, O(V * N * C) id reads: fine for a character vocabulary (V ~ 100),
// too slow for V ~ 50k, where sorting the rows by id once (a segmented sum
// over the sorted order) would cut it to O(N * C). Ids >= vocab match no
// row of dwte (the forward already made their rows NaN).
#include "types.glsl"
#include "elementwise.glsl"

layout(constant_id = 0) const uint TOKENS = 1;

layout(std430, binding = 0) readonly buffer Ids { uint ids[]; };
layout(std430, binding = 1) readonly buffer DY { sfp dy[]; };
layout(std430, binding = 2) buffer DW { sfp dw[]; };
layout(push_constant) uniform Push {
  uint n;  // keys * cols: vocab * C (tokens) or T * C (positions)
  uint cols, rows, seq_len, accumulate;
} p;

void main() {
  FOR_EACH_ELEMENT(i, p.n) {
    uint key = i / p.cols;
    uint c = i - key * p.cols;
    float s = 0.0;
    if (TOKENS != 0u) {
      for (uint r = 0u; r < p.rows; ++r)
        if (ids[r] == key) s += sfp2f(dy[r * p.cols + c]);
    } else {
      for (uint r = key; r < p.rows; r += p.seq_len) s += sfp2f(dy[r * p.cols + c]);
    }
    if (p.accumulate != 0u) s += sfp2f(dw[i]);
    dw[i] = f2sfp(s);
  }
}
