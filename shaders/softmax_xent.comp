#version 450
#extension GL_GOOGLE_include_directive : require
// Softmax cross-entropy forward in fp32, over one chunk of rows (the host
// splits the logits into views that each fit one binding):
// row_loss[first + r] = logsumexp(logits[r, :]) - logits[r, label], and 0
// for a row that is no target (VKAMP_NOT_TARGET). xent_mean.comp then takes
// the mean over the targets. Rows map onto invocations as row_sum.glsl says:
// a real vocabulary's row (32k-262k classes) is a workgroup's, so no
// invocation's loops come near lavapipe's 65535 iterations. A label out of
// range, or a NaN or +inf logit, gives NaN, so bad data cannot pass as a
// small loss.
#include "types.glsl"
#include "nonfinite.glsl"
#include "row_sum.glsl"
#include "vkamp/gpu_abi/not_target.h"

layout(std430, binding = 0) readonly buffer Logits { sfp logits[]; };     // the chunk's rows
layout(std430, binding = 1) readonly buffer Labels { uint labels[]; };    // every row
layout(std430, binding = 2) writeonly buffer RowLoss { float row_loss[]; };  // every row
#include "vkamp/gpu_abi/softmax_xent.h"

void main() {
  FOR_EACH_ROW(r, p.rows) {
    uint label = labels[p.first + r];
    if ((label & VKAMP_NOT_TARGET) != 0u) {  // the same row for the whole workgroup: a uniform branch
      if (row_lane() == 0u) row_loss[p.first + r] = 0.0;
      continue;
    }
    uint base = r * p.classes;
    float mx = uintBitsToFloat(0xFF800000u);  // -inf
    for (uint c = row_lane(); c < p.classes; c += kRowThreads) mx = max(mx, sfp2f(logits[base + c]));
    mx = row_max(mx);
    float s = 0.0, bad = 0.0;  // GLSL max() may drop a NaN: the bits decide
    for (uint c = row_lane(); c < p.classes; c += kRowThreads) {
      float v = sfp2f(logits[base + c]);
      if (is_nan_bits(v) || (is_inf_bits(v) && v > 0.0)) bad = 1.0;
      s += exp(v - mx);
    }
    vec2 t = row_sum(vec2(s, bad));
    bool ok = t.y == 0.0 && label < p.classes;
    if (row_lane() == 0u) row_loss[p.first + r] = ok ? mx + log(t.x) - sfp2f(logits[base + label]) : quiet_nan();
  }
}
