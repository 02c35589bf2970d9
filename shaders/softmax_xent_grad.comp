#version 450
#extension GL_GOOGLE_include_directive : require
// Softmax cross-entropy backward in fp32, over one chunk of rows as
// softmax_xent.comp: dlogits = (softmax(logits) - onehot(label)) * scale[0]
// / targets, and 0 in a row that is no target (VKAMP_NOT_TARGET). The loss
// scale and the count of targets (the forward's, xent_mean.comp) are read
// from GPU buffers: no host round trip. A NaN or +inf logit, or a label out
// of range, makes the row's gradient NaN.
#include "types.glsl"
#include "nonfinite.glsl"
#include "row_sum.glsl"
#include "vkamp/gpu_abi/not_target.h"

layout(std430, binding = 0) readonly buffer Logits { sfp logits[]; };   // the chunk's rows
layout(std430, binding = 1) readonly buffer Labels { uint labels[]; };  // every row
layout(std430, binding = 2) readonly buffer Scale { float scale[]; };
layout(std430, binding = 3) readonly buffer Targets { float targets[]; };  // the forward's row_loss; [count_index] = the count
layout(std430, binding = 4) writeonly buffer DLogits { sfp dlogits[]; };  // the chunk's rows
#include "vkamp/gpu_abi/softmax_xent.h"

void main() {
  FOR_EACH_ROW(r, p.rows) {
    uint base = r * p.classes;
    uint label = labels[p.first + r];
    if ((label & VKAMP_NOT_TARGET) != 0u) {  // uniform over the workgroup's row
      for (uint c = row_lane(); c < p.classes; c += kRowThreads) dlogits[base + c] = f2sfp(0.0);
      continue;
    }
    float mx = uintBitsToFloat(0xFF800000u);  // -inf
    for (uint c = row_lane(); c < p.classes; c += kRowThreads) mx = max(mx, sfp2f(logits[base + c]));
    mx = row_max(mx);
    float s = 0.0, bad = 0.0;
    for (uint c = row_lane(); c < p.classes; c += kRowThreads) {
      float v = sfp2f(logits[base + c]);
      if (is_nan_bits(v) || (is_inf_bits(v) && v > 0.0)) bad = 1.0;
      s += exp(v - mx);
    }
    vec2 t = row_sum(vec2(s, bad));
    bool nan_row = t.y != 0.0 || label >= p.classes;
    float k = scale[0] / targets[p.count_index];
    for (uint c = row_lane(); c < p.classes; c += kRowThreads) {
      float prob = exp(sfp2f(logits[base + c]) - mx) / t.x;
      float g = (prob - (c == label ? 1.0 : 0.0)) * k;
      dlogits[base + c] = f2sfp(nan_row ? quiet_nan() : g);
    }
  }
}
