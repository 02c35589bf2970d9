// scale.comp (ops::scale): y = x * factor * {1, s, 1/s}, s = s[index].
#ifndef VKAMP_INTERFACE_SCALE_H
#define VKAMP_INTERFACE_SCALE_H
#include "macros.h"

VKAMP_PUSH(ScalePush)
  uint n;
  float factor;
  uint index;  // the scalar is s[index]
VKAMP_PUSH_END(ScalePush, p, 12)

VKAMP_SHADER(ScaleShader, scale, 3, ScalePush)  // x, y, s

#endif
