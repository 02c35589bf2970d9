#version 450
#extension GL_GOOGLE_include_directive : require
// The fused AMP pass, one read of every gradient: per workgroup, the count
// of non-finite values and the sum of squares (fp32); on histogram steps,
// also the exponent histogram of the unscaled gradients per tensor
// (log2 bins from 2^-40 to 2^16, plus zero, inf and NaN).
// step_control.comp reduces the partials.
#include "types.glsl"
#include "train_state.glsl"
#include "elementwise.glsl"

layout(std430, binding = 0) readonly buffer State { TrainState st; };
layout(std430, binding = 1) readonly buffer Params { TrainParams prm; };
layout(std430, binding = 2) readonly buffer Grads { sfp g[]; };
layout(std430, binding = 3) readonly buffer Tensors { uvec2 tensor_range[]; };  // [begin, end)
layout(std430, binding = 4) writeonly buffer PartialSq { float partial_sq[]; };
layout(std430, binding = 5) writeonly buffer PartialBad { uint partial_bad[]; };
layout(std430, binding = 6) buffer Hist { uint hist[]; };  // tensors x kHistBins, zeroed by step_control
layout(push_constant) uniform Push { uint n; } p;

shared float sq[256];
shared uint bad[256];

uint bin_of(float v) {
  if (isnan(v)) return kHistNan;
  if (isinf(v)) return kHistInf;
  if (v == 0.0) return kHistZero;
  int e = int((floatBitsToUint(v) >> 23) & 0xFFu) - 127;  // floor(log2 v) for normal v
  return uint(clamp(e - kHistMinExp, 0, int(kHistLogBins) - 1));
}

void main() {
  bool histogram = prm.histogram_interval != 0u && st.step % prm.histogram_interval == 0u;
  float inv_scale = 1.0 / st.scale;
  float s = 0.0;
  uint nb = 0u;
  uint t = 0u;
  FOR_EACH_ELEMENT(i, p.n) {
    float v = sfp2f(g[i]);
    bool finite = !isnan(v) && !isinf(v);
    nb += finite ? 0u : 1u;
    s += finite ? v * v : 0.0;
    if (histogram) {
      while (t + 1u < prm.tensors && i >= tensor_range[t].y) ++t;  // i only grows
      if (i >= tensor_range[t].x && i < tensor_range[t].y)
        atomicAdd(hist[t * kHistBins + bin_of(abs(v) * inv_scale)], 1u);
    }
  }
  uint lid = gl_LocalInvocationID.x;
  sq[lid] = s;
  bad[lid] = nb;
  barrier();
  for (uint w = 128u; w > 0u; w >>= 1) {
    if (lid < w) {
      sq[lid] += sq[lid + w];
      bad[lid] += bad[lid + w];
    }
    barrier();
  }
  if (lid == 0u) {
    partial_sq[gl_WorkGroupID.x] = sq[0];
    partial_bad[gl_WorkGroupID.x] = bad[0];
  }
}
