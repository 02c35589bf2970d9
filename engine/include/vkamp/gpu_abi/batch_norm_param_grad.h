// batch_norm_param_grad.comp (ops::batch_norm_param_grads).
#ifndef VKAMP_INTERFACE_BATCH_NORM_PARAM_GRAD_H
#define VKAMP_INTERFACE_BATCH_NORM_PARAM_GRAD_H
#include "macros.h"

VKAMP_PUSH(BatchNormParamGradPush)
  uint c;
  uint sums_at;
  uint accumulate_weight;
  uint accumulate_bias;
VKAMP_PUSH_END(BatchNormParamGradPush, p, 16)

// sums, dweight, dbias
VKAMP_SHADER(BatchNormParamGradShader, batch_norm_param_grad, 3, BatchNormParamGradPush)

#endif
