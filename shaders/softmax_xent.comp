#version 450
#extension GL_GOOGLE_include_directive : require
// Softmax cross-entropy forward, one thread per row, in fp32:
// row_loss[r] = logsumexp(logits[r, :]) - logits[r, label[r]], and 0 for a
// row that is no target (VKAMP_NOT_TARGET). xent_mean.comp then takes the
// mean over the targets. A label out of range gives NaN, so bad data cannot
// pass as a small loss.
#include "types.glsl"
#include "nonfinite.glsl"
#include "vkamp/gpu_abi/not_target.h"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Logits { sfp logits[]; };
layout(std430, binding = 1) readonly buffer Labels { uint labels[]; };
layout(std430, binding = 2) writeonly buffer RowLoss { float row_loss[]; };
#include "vkamp/gpu_abi/softmax_xent.h"

void main() {
  uint r = gl_GlobalInvocationID.x;
  if (r >= p.rows) return;
  uint base = r * p.classes;
  float mx = sfp2f(logits[base]);
  for (uint c = 1u; c < p.classes; ++c) mx = max(mx, sfp2f(logits[base + c]));
  float s = 0.0;
  bool nan_seen = false;
  for (uint c = 0u; c < p.classes; ++c) {
    float v = sfp2f(logits[base + c]);
    nan_seen = nan_seen || is_nan_bits(v);  // GLSL max() may drop a NaN
    s += exp(v - mx);
  }
  uint label = labels[r];
  if ((label & VKAMP_NOT_TARGET) != 0u) {
    row_loss[r] = 0.0;
    return;
  }
  float loss = label < p.classes ? mx + log(s) - sfp2f(logits[base + label]) : uintBitsToFloat(0x7FC00000u);
  row_loss[r] = nan_seen ? uintBitsToFloat(0x7FC00000u) : loss;
}
