// batch_norm.comp (ops::batch_norm_forward): chunks of chunk_rows rows;
// *_at: the element offsets of the fp32 operands in their bindings.
#ifndef VKAMP_INTERFACE_BATCH_NORM_H
#define VKAMP_INTERFACE_BATCH_NORM_H
#include "macros.h"

VKAMP_PUSH(BatchNormPush)
  uint rows;
  uint c;
  uint chunk_rows;
  uint mean_at;
  uint var_at;
  uint weight_at;
  uint bias_at;
  float eps;
VKAMP_PUSH_END(BatchNormPush, p, 32)

VKAMP_SHADER(BatchNormShader, batch_norm, 6, BatchNormPush)  // x, mean, var, weight, bias, y

#endif
