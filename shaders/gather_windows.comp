#version 450
#extension GL_GOOGLE_include_directive : require
// A language model's micro-batch from one token stream (HostData::windows):
// example e is the window of `width` tokens at e x stride, and its labels
// are the same window one token later. Resident, the slot holds example ids
// and src is the whole stream; STAGED_ROWS, the host staged each example's
// width + 1 tokens into the slot, and src is the ring. A token marked
// VKAMP_NOT_TARGET is read as its id, and its label keeps the mark.
#include "vkamp/gpu_abi/train_state.h"
#include "vkamp/gpu_abi/not_target.h"
#include "elementwise.glsl"

layout(constant_id = 0) const uint STAGED_ROWS = 0;

layout(std430, binding = 0) readonly buffer State { TrainState st; };
layout(std430, binding = 1) readonly buffer Ids { uint ids[]; };  // unread with STAGED_ROWS
layout(std430, binding = 2) readonly buffer Src { uint src[]; };
layout(std430, binding = 3) writeonly buffer X { uint x[]; };
layout(std430, binding = 4) writeonly buffer Y { uint y[]; };
#include "vkamp/gpu_abi/gather_windows.h"

void main() {
  uint first = ((st.cursor + p.micro) % p.slots) * p.rows;
  FOR_EACH_ELEMENT(i, p.rows * p.width) {
    uint r = i / p.width, t = i % p.width;
    uint start = STAGED_ROWS != 0u ? (first + r) * (p.width + 1u) : ids[first + r] * p.stride;
    x[i] = src[start + t] & ~VKAMP_NOT_TARGET;
    y[i] = src[start + t + 1u];
  }
}
