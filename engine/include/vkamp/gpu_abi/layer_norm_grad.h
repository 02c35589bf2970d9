// layer_norm_grad.comp (ops::layer_norm_backward_input, rms_norm_backward_input).
#ifndef VKAMP_INTERFACE_LAYER_NORM_GRAD_H
#define VKAMP_INTERFACE_LAYER_NORM_GRAD_H
#include "macros.h"

VKAMP_PUSH(LayerNormGradPush)
  uint rows;
  uint cols;
  uint accumulate;
  uint centered;  // 1: LayerNorm; 0: RMSNorm (no mean_c(g) term)
VKAMP_PUSH_END(LayerNormGradPush, p, 16)

VKAMP_SHADER(LayerNormGradShader, layer_norm_grad, 5, LayerNormGradPush)  // x, gamma, mean_rstd, dy, dx

#endif
