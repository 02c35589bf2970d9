#version 450
#extension GL_GOOGLE_include_directive : require
// Copies one micro-batch of rows into the batch buffer the model reads. The
// host staged, for micro-batch b, slot b mod slots of a ring (batch_feeder.hpp):
// either the batch's example ids, and src is the set on the GPU, or
// (STAGED_ROWS) the rows themselves, and src is the ring. The slot comes
// from the GPU-side cursor, so a recorded step needs no host input.
#include "types.glsl"
#include "vkamp/gpu_abi/train_state.h"
#include "elementwise.glsl"

layout(constant_id = 0) const uint STAGED_ROWS = 0;

layout(std430, binding = 0) readonly buffer State { TrainState st; };
layout(std430, binding = 1) readonly buffer Ids { uint ids[]; };  // slots x rows; unread with STAGED_ROWS
layout(std430, binding = 2) readonly buffer Src { sfp src[]; };
layout(std430, binding = 3) writeonly buffer Dst { sfp dst[]; };
#include "vkamp/gpu_abi/gather.h"

void main() {
  uint first = ((st.cursor + p.micro) % p.slots) * p.rows;
  FOR_EACH_ELEMENT(i, p.rows * p.width) {
    uint r = i / p.width, c = i % p.width;
    uint row = STAGED_ROWS != 0u ? first + r : ids[first + r];
    dst[i] = src[row * p.width + c];
  }
}
