// layer_scale.comp (train::LayerScales): per-layer loss scaling's update.
#ifndef VKAMP_INTERFACE_LAYER_SCALE_H
#define VKAMP_INTERFACE_LAYER_SCALE_H
#include "macros.h"

VKAMP_PUSH(LayerScalePush)
  uint groups;
  int output_group;    // the group the loss gradient enters; -1: none
  float format_max;    // the storage format's largest finite value
  float format_tiny;   // and its smallest positive (subnormal) value
VKAMP_PUSH_END(LayerScalePush, p, 16)

// state, params, layers, factors, tensor_group, stats, ring
VKAMP_SHADER_ONE_BUILD(LayerScaleShader, layer_scale, 7, LayerScalePush)

#endif
