#version 450
#extension GL_GOOGLE_include_directive : require
// Gathers one micro-batch of rows from the GPU-resident dataset:
// dst[r, :] = src[perm[epoch][pos + r], :], with the batch position taken
// from the GPU-side cursor, so a recorded step needs no host input.
#include "types.glsl"
#include "train_state.glsl"
#include "elementwise.glsl"

layout(std430, binding = 0) readonly buffer State { TrainState st; };
layout(std430, binding = 1) readonly buffer Perm { uint perm[]; };
layout(std430, binding = 2) readonly buffer Src { sfp src[]; };
layout(std430, binding = 3) writeonly buffer Dst { sfp dst[]; };
layout(push_constant) uniform Push {
  uint rows, width, count, steps_per_epoch, epochs_stored, micro;
} p;

void main() {
  uint batch = st.cursor + p.micro;
  uint epoch = (batch / p.steps_per_epoch) % p.epochs_stored;
  uint pos = (batch % p.steps_per_epoch) * p.rows;
  FOR_EACH_ELEMENT(i, p.rows * p.width) {
    uint r = i / p.width, c = i % p.width;
    uint ex = perm[epoch * p.count + pos + r];
    dst[i] = src[ex * p.width + c];
  }
}
