// batch_norm_grad.comp (ops::batch_norm_backward_input): chunks of
// chunk_rows rows; *_at: the element offsets of the fp32 operands in their bindings.
#ifndef VKAMP_INTERFACE_BATCH_NORM_GRAD_H
#define VKAMP_INTERFACE_BATCH_NORM_GRAD_H
#include "macros.h"

VKAMP_PUSH(BatchNormGradPush)
  uint rows;
  uint c;
  uint chunk_rows;
  uint mean_at;
  uint var_at;
  uint weight_at;
  uint sums_at;
  uint accumulate;
  float eps;
VKAMP_PUSH_END(BatchNormGradPush, p, 36)

// x, mean, var, weight, dy, sums, dx
VKAMP_SHADER(BatchNormGradShader, batch_norm_grad, 7, BatchNormGradPush)

#endif
