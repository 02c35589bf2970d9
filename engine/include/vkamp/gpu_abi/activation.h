// activation.comp (ops::activation_forward/backward): one activation over n
// elements, forward or backward.
#ifndef VKAMP_INTERFACE_ACTIVATION_H
#define VKAMP_INTERFACE_ACTIVATION_H
#include "macros.h"

VKAMP_PUSH(ActivationPush)
  uint n;
VKAMP_PUSH_END(ActivationPush, p, 4)

VKAMP_SHADER(ActivationShader, activation, 3, ActivationPush)  // x, dy, out

#endif
