// batch_norm_grad_sums.comp (ops::batch_norm_grad_sums): per chunk of
// chunk_rows rows, each channel's sum dy and sum dy * xhat, fp32.
#ifndef VKAMP_INTERFACE_BATCH_NORM_GRAD_SUMS_H
#define VKAMP_INTERFACE_BATCH_NORM_GRAD_SUMS_H
#include "macros.h"

VKAMP_PUSH(BatchNormGradSumsPush)
  uint rows;
  uint c;
  uint chunk_rows;
  uint mean_at;
  uint var_at;
  float eps;
VKAMP_PUSH_END(BatchNormGradSumsPush, p, 24)

// x, mean, var, dy, partial
VKAMP_SHADER(BatchNormGradSumsShader, batch_norm_grad_sums, 5, BatchNormGradSumsPush)

#endif
