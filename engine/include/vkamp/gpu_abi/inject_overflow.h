// inject_overflow.comp (train::StepProgram): writes +inf into gradient
// element `index` on the steps (below `steps`) the bitmask marks.
#ifndef VKAMP_INTERFACE_INJECT_OVERFLOW_H
#define VKAMP_INTERFACE_INJECT_OVERFLOW_H
#include "macros.h"

VKAMP_PUSH(InjectOverflowPush)
  uint steps;
  uint index;
VKAMP_PUSH_END(InjectOverflowPush, p, 8)

VKAMP_SHADER(InjectOverflowShader, inject_overflow, 3, InjectOverflowPush)  // state, mask, grads

#endif
