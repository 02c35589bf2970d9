// layer_norm.comp (ops::layer_norm_forward).
#ifndef VKAMP_INTERFACE_LAYER_NORM_H
#define VKAMP_INTERFACE_LAYER_NORM_H
#include "macros.h"

VKAMP_PUSH(LayerNormPush)
  uint rows;
  uint cols;
  float eps;
VKAMP_PUSH_END(LayerNormPush, p, 12)

VKAMP_SHADER(LayerNormShader, layer_norm, 5, LayerNormPush)  // x, gamma, beta, y, mean_rstd

#endif
