// sum.comp (ops::sum_f32): out[index] = factor * sum(x[0..n)), in fp32.
// Built once.
#ifndef VKAMP_INTERFACE_SUM_H
#define VKAMP_INTERFACE_SUM_H
#include "macros.h"

VKAMP_PUSH(SumPush)
  uint n;
  uint index;
  float factor;
VKAMP_PUSH_END(SumPush, p, 12)

VKAMP_SHADER_ONE_BUILD(SumShader, sum, 2, SumPush)  // x, out

#endif
