#version 450
#extension GL_GOOGLE_include_directive : require
// Per-layer loss scaling (issue 24 §3): per parameter tensor (one workgroup
// each), the largest finite |gradient| as fp32 bits and the count of inf and
// NaN, in TensorStats (the other fields stay 0), for layer_scale.comp.
// A stand-in until amp_check.comp fills TensorStats every step (issue 24
// §1): then layer_scale.comp reads those and this pass goes.
// ACCUMULATED = 1 reads the fp32 sum of the micro-batch gradients.
#include "types.glsl"
#include "nonfinite.glsl"
#include "vkamp/train/train_state.h"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint ACCUMULATED = 0;
layout(std430, binding = 0) readonly buffer Grads { sfp g[]; };
layout(std430, binding = 1) readonly buffer GradSum { float gsum[]; };  // ACCUMULATED only
layout(std430, binding = 2) readonly buffer Tensors { uvec2 tensor_range[]; };  // [begin, end)
layout(std430, binding = 3) writeonly buffer Stats { TensorStats stats[]; };
#include "interface/layer_stats.h"

shared uint amax[256];
shared uint bad[256];

void main() {
  uint t = gl_WorkGroupID.x, lid = gl_LocalInvocationID.x;
  if (t >= p.tensors) return;
  uvec2 r = tensor_range[t];
  uint m = 0u, nb = 0u;
  for (uint i = r.x + lid; i < r.y; i += 256u) {
    float v = ACCUMULATED != 0u ? gsum[i] : sfp2f(g[i]);
    if (is_nonfinite(v)) nb += 1u;
    else m = max(m, floatBitsToUint(abs(v)));  // non-negative floats order as their bits
  }
  amax[lid] = m;
  bad[lid] = nb;
  barrier();
  for (uint w = 128u; w > 0u; w >>= 1) {
    if (lid < w) {
      amax[lid] = max(amax[lid], amax[lid + w]);
      bad[lid] += bad[lid + w];
    }
    barrier();
  }
  if (lid == 0u) stats[t] = TensorStats(0u, 0u, 0u, bad[0], amax[0]);
}
