// amp_check.comp (train::StepProgram): the fused pass over all gradients
// (non-finite flag, sum of squares, underflow accounting, histogram).
#ifndef VKAMP_INTERFACE_AMP_CHECK_H
#define VKAMP_INTERFACE_AMP_CHECK_H
#include "macros.h"

VKAMP_PUSH(AmpCheckPush)
  uint n;
VKAMP_PUSH_END(AmpCheckPush, p, 4)

// state, params, grads, tensor ranges, partial_sq, partial_bad, hist, grad_sum,
// tensor stats, layer scales, tensor groups (the last two per-layer runs only)
VKAMP_SHADER(AmpCheckShader, amp_check, 11, AmpCheckPush)

#endif
