// grad_accumulate.comp (train::StepProgram): adds a micro-batch's 16-bit
// gradient into the fp32 sum (`first`: the first micro-batch, which
// overwrites it).
#ifndef VKAMP_INTERFACE_GRAD_ACCUMULATE_H
#define VKAMP_INTERFACE_GRAD_ACCUMULATE_H
#include "macros.h"

VKAMP_PUSH(GradAccumulatePush)
  uint n;
  uint first;
VKAMP_PUSH_END(GradAccumulatePush, p, 8)

VKAMP_SHADER(GradAccumulateShader, grad_accumulate, 2, GradAccumulatePush)  // grads, grad_sum

#endif
