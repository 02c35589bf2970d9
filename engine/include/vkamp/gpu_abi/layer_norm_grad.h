// layer_norm_grad.comp (ops::layer_norm_backward_input).
#ifndef VKAMP_INTERFACE_LAYER_NORM_GRAD_H
#define VKAMP_INTERFACE_LAYER_NORM_GRAD_H
#include "macros.h"

VKAMP_PUSH(LayerNormGradPush)
  uint rows;
  uint cols;
  uint accumulate;
VKAMP_PUSH_END(LayerNormGradPush, p, 12)

VKAMP_SHADER(LayerNormGradShader, layer_norm_grad, 5, LayerNormGradPush)  // x, gamma, mean_rstd, dy, dx

#endif
