#version 450
#extension GL_GOOGLE_include_directive : require
// Fault injection: on the steps marked in a bitmask, writes +inf into one
// gradient before the AMP pass sees it (demos, tests, the dashboard).
#include "types.glsl"
#include "vkamp/gpu_abi/train_state.h"
layout(local_size_x = 1) in;

layout(std430, binding = 0) readonly buffer State { TrainState st; };
layout(std430, binding = 1) readonly buffer Mask { uint mask[]; };
layout(std430, binding = 2) buffer Grads { sfp g[]; };
#include "vkamp/gpu_abi/inject_overflow.h"

void main() {
  uint s = st.step;
  if (s < p.steps && (mask[s / 32u] & (1u << (s % 32u))) != 0u)
    g[p.index] = f2sfp(uintBitsToFloat(0x7F800000u));
}
