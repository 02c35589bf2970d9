// batch_norm.comp (ops::batch_norm_forward). n = rows * c; *_at: the
// element offsets of the fp32 operands in their bindings.
#ifndef VKAMP_INTERFACE_BATCH_NORM_H
#define VKAMP_INTERFACE_BATCH_NORM_H
#include "macros.h"

VKAMP_PUSH(BatchNormPush)
  uint n;
  uint c;
  uint mean_at;
  uint var_at;
  uint weight_at;
  uint bias_at;
  float eps;
VKAMP_PUSH_END(BatchNormPush, p, 28)

VKAMP_SHADER(BatchNormShader, batch_norm, 6, BatchNormPush)  // x, mean, var, weight, bias, y

#endif
