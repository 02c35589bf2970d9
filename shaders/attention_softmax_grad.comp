#version 450
#extension GL_GOOGLE_include_directive : require
// The backward of attention_softmax.comp, in place: each row of g holds
// dP = d loss / d P of one query position t (as in the forward: the push
// block's header) and becomes
//   dS[j] = P[j] (dP[j] - sum_{j' <= t} P[j'] dP[j']) for j <= t, 0 for j > t,
// in fp32 (the 1/sqrt(hd) of the scores is applied by the GEMMs after).
// The masked dP (j > t) are never read: V at later positions may hold
// anything there. A NaN among the kept dP makes the row NaN through the sum.
#include "types.glsl"
#include "row_sum.glsl"

layout(std430, binding = 0) readonly buffer Probs { sfp prob[]; };
layout(std430, binding = 1) buffer Grad { sfp g[]; };
#include "vkamp/gpu_abi/attention_softmax.h"

void main() {
  uint lid = row_lane();
  FOR_EACH_ROW(r, p.rows) {
    uint base = r * p.seq, keys = p.seq - p.queries + r % p.queries + 1u;
    float dot = 0.0;
    for (uint j = lid; j < keys; j += kRowThreads) dot += sfp2f(prob[base + j]) * sfp2f(g[base + j]);
    dot = row_sum(vec2(dot, 0.0)).x;
    // Each invocation reads only the dP it then overwrites.
    for (uint j = lid; j < p.seq; j += kRowThreads)
      g[base + j] = f2sfp(j < keys ? sfp2f(prob[base + j]) * (sfp2f(g[base + j]) - dot) : 0.0);
  }
}
