#version 450
#extension GL_GOOGLE_include_directive : require
// Evaluation: counts rows whose arg-max logit is the label (ties go to the
// lower class; a NaN row never counts as correct).
#include "types.glsl"
#include "nonfinite.glsl"
layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer Logits { sfp logits[]; };
layout(std430, binding = 1) readonly buffer Labels { uint labels[]; };
layout(std430, binding = 2) buffer Correct { uint correct[]; };
#include "vkamp/gpu_abi/accuracy.h"

void main() {
  uint r = gl_GlobalInvocationID.x;
  if (r >= p.rows) return;
  uint best = 0u;
  float bv = sfp2f(logits[r * p.classes]);
  bool ok = !is_nan_bits(bv);
  for (uint c = 1u; c < p.classes; ++c) {
    float v = sfp2f(logits[r * p.classes + c]);
    ok = ok && !is_nan_bits(v);
    if (v > bv) { bv = v; best = c; }
  }
  if (ok && best == labels[r]) atomicAdd(correct[0], 1u);
}
