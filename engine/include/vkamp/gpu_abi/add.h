// add.comp (ops::add_forward): y = a + b over n elements.
#ifndef VKAMP_INTERFACE_ADD_H
#define VKAMP_INTERFACE_ADD_H
#include "macros.h"

VKAMP_PUSH(AddPush)
  uint n;
VKAMP_PUSH_END(AddPush, p, 4)

VKAMP_SHADER(AddShader, add, 3, AddPush)  // a, b, y

#endif
