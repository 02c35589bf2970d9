// layer_norm_param_grad.comp (ops::layer_norm_backward_params): fp32
// partial column sums for dgamma and dbeta, in chunks of chunk_rows rows
// (RMSNorm, centered 0: dgamma alone; partial_beta is not written).
#ifndef VKAMP_INTERFACE_LAYER_NORM_PARAM_GRAD_H
#define VKAMP_INTERFACE_LAYER_NORM_PARAM_GRAD_H
#include "macros.h"

VKAMP_PUSH(LayerNormParamGradPush)
  uint rows;
  uint cols;
  uint chunk_rows;
  uint centered;
VKAMP_PUSH_END(LayerNormParamGradPush, p, 16)

// x, mean_rstd, dy, partial_gamma, partial_beta
VKAMP_SHADER(LayerNormParamGradShader, layer_norm_param_grad, 5, LayerNormParamGradPush)

#endif
