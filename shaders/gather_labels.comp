#version 450
#extension GL_GOOGLE_include_directive : require
// The uint32 rows that go with gather.comp's (same slot, same order): one
// label per example, a label per position (a language model), or a model's
// token ids.
#include "vkamp/gpu_abi/train_state.h"
#include "elementwise.glsl"

layout(constant_id = 0) const uint STAGED_ROWS = 0;

layout(std430, binding = 0) readonly buffer State { TrainState st; };
layout(std430, binding = 1) readonly buffer Ids { uint ids[]; };
layout(std430, binding = 2) readonly buffer Src { uint src[]; };
layout(std430, binding = 3) writeonly buffer Dst { uint dst[]; };
#include "vkamp/gpu_abi/gather.h"

void main() {
  uint first = ((st.cursor + p.micro) % p.slots) * p.rows;
  FOR_EACH_ELEMENT(i, p.rows * p.width) {
    uint r = i / p.width, c = i % p.width;
    uint row = STAGED_ROWS != 0u ? first + r : ids[first + r];
    dst[i] = src[row * p.width + c];
  }
}
