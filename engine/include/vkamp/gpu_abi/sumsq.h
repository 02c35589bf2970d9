// sumsq.comp (ops::sum_squares): per-workgroup fp32 partial sums of x^2 or
// (x - t)^2.
#ifndef VKAMP_INTERFACE_SUMSQ_H
#define VKAMP_INTERFACE_SUMSQ_H
#include "macros.h"

VKAMP_PUSH(SumsqPush)
  uint n;
VKAMP_PUSH_END(SumsqPush, p, 4)

VKAMP_SHADER(SumsqShader, sumsq, 3, SumsqPush)  // x, t, partial

#endif
