// layer_norm.comp (ops::layer_norm_forward, and ops::rms_norm_forward with
// centered 0: no mean taken out, no beta).
#ifndef VKAMP_INTERFACE_LAYER_NORM_H
#define VKAMP_INTERFACE_LAYER_NORM_H
#include "macros.h"

VKAMP_PUSH(LayerNormPush)
  uint rows;
  uint cols;
  float eps;
  uint centered;  // 1: LayerNorm; 0: RMSNorm
VKAMP_PUSH_END(LayerNormPush, p, 16)

VKAMP_SHADER(LayerNormShader, layer_norm, 5, LayerNormPush)  // x, gamma, beta, y, mean_rstd

#endif
