// bias_add.comp (ops::bias_add_forward): y[i] += bias[i % cols].
#ifndef VKAMP_INTERFACE_BIAS_ADD_H
#define VKAMP_INTERFACE_BIAS_ADD_H
#include "macros.h"

VKAMP_PUSH(BiasAddPush)
  uint n;
  uint cols;
VKAMP_PUSH_END(BiasAddPush, p, 8)

VKAMP_SHADER(BiasAddShader, bias_add, 2, BiasAddPush)  // y, bias

#endif
