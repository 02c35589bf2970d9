#version 450
#extension GL_GOOGLE_include_directive : require
// The labels that go with gather.comp's rows (same slot, same order).
#include "train_state.glsl"
layout(local_size_x = 64) in;

layout(constant_id = 0) const uint STAGED_ROWS = 0;

layout(std430, binding = 0) readonly buffer State { TrainState st; };
layout(std430, binding = 1) readonly buffer Ids { uint ids[]; };
layout(std430, binding = 2) readonly buffer Src { uint src[]; };
layout(std430, binding = 3) writeonly buffer Dst { uint dst[]; };
layout(push_constant) uniform Push {
  uint rows, width, slots, micro;
} p;

void main() {
  uint r = gl_GlobalInvocationID.x;
  if (r >= p.rows) return;
  uint first = ((st.cursor + p.micro) % p.slots) * p.rows;
  dst[r] = src[STAGED_ROWS != 0u ? first + r : ids[first + r]];
}
