#version 450
#extension GL_GOOGLE_include_directive : require
// The fused AMP pass, one read of every gradient: per workgroup, the count
// of non-finite values and the sum of squares of the finite ones; on
// histogram steps, also the exponent histogram of the unscaled gradients
// per tensor (log2 bins from 2^-40 to 2^16, plus zero, inf and NaN).
// step_control.comp reduces the partials.
//
// ACCUMULATED = 1 (grad_accum > 1) reads the fp32 sum of the micro-batch
// gradients (grad_accumulate.comp) instead of the 16-bit gradient; an inf or
// NaN of any micro-batch survives into that sum. The histograms then show
// the sum too, not one micro-batch's 16-bit values.
//
// The norm cannot overflow for finite gradients: each partial is kept as
// (k, s) meaning s * 4^k, where 2^k is the largest binade seen and every
// square is taken of |v| * 2^-k < 2 (LAPACK nrm2's scaled sum, with power-of-
// two scale factors so the rescaling itself is exact). A plain sum of v*v
// overflows fp32 once |v| > 1.8e19, which bf16 and cb16 gradients reach at a
// large loss scale; dividing by the scale first would not help at a scale
// below 1. The overflow decision comes only from the non-finite count.
#include "types.glsl"
#include "nonfinite.glsl"
#include "vkamp/train/train_state.h"
#include "elementwise.glsl"

layout(constant_id = 0) const uint ACCUMULATED = 0;
layout(std430, binding = 0) readonly buffer State { TrainState st; };
layout(std430, binding = 1) readonly buffer Params { TrainParams prm; };
layout(std430, binding = 2) readonly buffer Grads { sfp g[]; };
layout(std430, binding = 3) readonly buffer Tensors { uvec2 tensor_range[]; };  // [begin, end)
layout(std430, binding = 4) writeonly buffer PartialSq { vec2 partial_sq[]; };   // (s, k): s * 4^k
layout(std430, binding = 5) writeonly buffer PartialBad { uint partial_bad[]; };
layout(std430, binding = 6) buffer Hist { uint hist[]; };  // tensors x kHistBins, zeroed by step_control
layout(std430, binding = 7) readonly buffer GradSum { float gsum[]; };  // ACCUMULATED only
#include "interface/amp_check.h"

shared float sq[256];
shared int sk[256];
shared uint bad[256];

uint bin_of(float v) {
  if (is_nan_bits(v)) return kHistNan;
  if (is_inf_bits(v)) return kHistInf;
  if (v == 0.0) return kHistZero;
  int e = int((floatBitsToUint(v) >> 23) & 0xFFu) - 127;  // floor(log2 v) for normal v
  return uint(clamp(e - kHistMinExp, 0, int(kHistLogBins) - 1));
}

void main() {
  bool histogram = prm.histogram_interval != 0u && st.step % prm.histogram_interval == 0u;
  float inv_scale = 1.0 / st.scale;
  float s = 0.0;
  int k = -126;              // binade of the largest |v| so far, clamped so 2^-k stays finite
  float down = pow2i(126);   // 2^-k
  uint nb = 0u;
  uint t = 0u;
  FOR_EACH_ELEMENT(i, p.n) {
    float v = ACCUMULATED != 0u ? gsum[i] : sfp2f(g[i]);
    if (is_nonfinite(v)) {
      nb += 1u;
    } else {
      int e = clamp(int((floatBitsToUint(v) >> 23) & 0xFFu) - 127, -126, 126);
      if (e > k) {
        s *= pow2i(2 * (k - e));
        k = e;
        down = pow2i(-k);
      }
      float a = abs(v) * down;
      s += a * a;
    }
    if (histogram) {
      while (t + 1u < prm.tensors && i >= tensor_range[t].y) ++t;  // i only grows
      if (i >= tensor_range[t].x && i < tensor_range[t].y)
        atomicAdd(hist[t * kHistBins + bin_of(abs(v) * inv_scale)], 1u);
    }
  }
  uint lid = gl_LocalInvocationID.x;
  sq[lid] = s;
  sk[lid] = k;
  bad[lid] = nb;
  barrier();
  for (uint w = 128u; w > 0u; w >>= 1) {
    if (lid < w) {
      int ka = sk[lid], kb = sk[lid + w], km = max(ka, kb);
      sq[lid] = sq[lid] * pow2i(2 * (ka - km)) + sq[lid + w] * pow2i(2 * (kb - km));
      sk[lid] = km;
      bad[lid] += bad[lid + w];
    }
    barrier();
  }
  if (lid == 0u) {
    partial_sq[gl_WorkGroupID.x] = vec2(sq[0], float(sk[0]));
    partial_bad[gl_WorkGroupID.x] = bad[0];
  }
}
