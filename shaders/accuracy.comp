#version 450
#extension GL_GOOGLE_include_directive : require
// Evaluation: counts the rows of one chunk (as softmax_xent.comp's) whose
// arg-max logit is the label. Ties go to the lower class; a row with a NaN
// never counts as correct, nor does one that is no target (its label has
// VKAMP_NOT_TARGET, so no class equals it). Rows map onto invocations as
// row_sum.glsl says.
#include "types.glsl"
#include "nonfinite.glsl"
#include "row_sum.glsl"

layout(std430, binding = 0) readonly buffer Logits { sfp logits[]; };  // the chunk's rows
layout(std430, binding = 1) readonly buffer Labels { uint labels[]; };  // every row
layout(std430, binding = 2) buffer Correct { uint correct[]; };
#include "vkamp/gpu_abi/accuracy.h"

void main() {
  FOR_EACH_ROW(r, p.rows) {
    uint base = r * p.classes;
    float mx = uintBitsToFloat(0xFF800000u);  // -inf
    float bad = 0.0;
    for (uint c = row_lane(); c < p.classes; c += kRowThreads) {
      float v = sfp2f(logits[base + c]);
      if (is_nan_bits(v)) bad = 1.0;
      mx = max(mx, v);
    }
    mx = row_max(mx);
    // The lowest class that holds the maximum: the largest -c among them
    // (exact in fp32 below 2^24 classes).
    float first = -float(p.classes);
    for (uint c = row_lane(); c < p.classes; c += kRowThreads)
      if (sfp2f(logits[base + c]) == mx) {
        first = -float(c);
        break;
      }
    vec2 t = row_sum(vec2(bad, 0.0));
    first = row_max(first);
    if (row_lane() == 0u && t.x == 0.0 && uint(-first) == labels[p.first + r]) atomicAdd(correct[0], 1u);
  }
}
