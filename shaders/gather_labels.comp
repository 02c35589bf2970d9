#version 450
#extension GL_GOOGLE_include_directive : require
// The labels that go with gather.comp's rows (same cursor, same order).
#include "train_state.glsl"
layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer State { TrainState st; };
layout(std430, binding = 1) readonly buffer Perm { uint perm[]; };
layout(std430, binding = 2) readonly buffer Src { uint src[]; };
layout(std430, binding = 3) writeonly buffer Dst { uint dst[]; };
layout(push_constant) uniform Push {
  uint rows, width, count, steps_per_epoch, epochs_stored, micro;
} p;

void main() {
  uint r = gl_GlobalInvocationID.x;
  if (r >= p.rows) return;
  uint batch = st.cursor + p.micro;
  uint epoch = (batch / p.steps_per_epoch) % p.epochs_stored;
  uint pos = (batch % p.steps_per_epoch) * p.rows;
  dst[r] = src[perm[epoch * p.count + pos + r]];
}
