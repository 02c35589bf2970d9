#version 450
#extension GL_GOOGLE_include_directive : require
// Softmax cross-entropy backward, one thread per row, in fp32:
// dlogits = (softmax(logits) - onehot(label)) * scale[0] / targets, and 0
// in a row that is no target (VKAMP_NOT_TARGET). The loss scale and the
// count of targets (the forward's, xent_mean.comp) are read from GPU
// buffers: no host round trip.
#include "types.glsl"
#include "nonfinite.glsl"
#include "vkamp/gpu_abi/not_target.h"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Logits { sfp logits[]; };
layout(std430, binding = 1) readonly buffer Labels { uint labels[]; };
layout(std430, binding = 2) readonly buffer Scale { float scale[]; };
layout(std430, binding = 3) readonly buffer Targets { float targets[]; };  // the forward's row_loss; [rows] = the count
layout(std430, binding = 4) writeonly buffer DLogits { sfp dlogits[]; };
#include "vkamp/gpu_abi/softmax_xent.h"

void main() {
  uint r = gl_GlobalInvocationID.x;
  if (r >= p.rows) return;
  uint base = r * p.classes;
  uint label = labels[r];
  if ((label & VKAMP_NOT_TARGET) != 0u) {
    for (uint c = 0u; c < p.classes; ++c) dlogits[base + c] = f2sfp(0.0);
    return;
  }
  float mx = sfp2f(logits[base]);
  bool nan_seen = is_nan_bits(mx);
  for (uint c = 1u; c < p.classes; ++c) {
    float v = sfp2f(logits[base + c]);
    nan_seen = nan_seen || is_nan_bits(v);
    mx = max(mx, v);
  }
  float s = 0.0;
  for (uint c = 0u; c < p.classes; ++c) s += exp(sfp2f(logits[base + c]) - mx);
  float k = scale[0] / targets[p.rows];
  for (uint c = 0u; c < p.classes; ++c) {
    float prob = exp(sfp2f(logits[base + c]) - mx) / s;
    float g = (prob - (c == label ? 1.0 : 0.0)) * k;
    if (nan_seen || label >= p.classes) g = uintBitsToFloat(0x7FC00000u);
    dlogits[base + c] = f2sfp(g);
  }
}
