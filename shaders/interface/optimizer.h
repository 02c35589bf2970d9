// optimizer.comp (train::StepProgram): the fused update of parameters
// [first, first + n), with weight decay where `decay` is set.
#ifndef VKAMP_INTERFACE_OPTIMIZER_H
#define VKAMP_INTERFACE_OPTIMIZER_H
#include "macros.h"

VKAMP_PUSH(OptimizerPush)
  uint first, n, decay;
VKAMP_PUSH_END(OptimizerPush, p, 12)

// state, params, grads, master, moment1, moment2, working, grad_sum
VKAMP_SHADER(OptimizerShader, optimizer, 8, OptimizerPush)

#endif
