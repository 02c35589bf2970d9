// mse_grad.comp (ops::mse_backward): dy = 2 (y - t) / n * scale[0].
#ifndef VKAMP_INTERFACE_MSE_GRAD_H
#define VKAMP_INTERFACE_MSE_GRAD_H
#include "macros.h"

VKAMP_PUSH(MseGradPush)
  uint n;
VKAMP_PUSH_END(MseGradPush, p, 4)

VKAMP_SHADER(MseGradShader, mse_grad, 4, MseGradPush)  // y, t, scale, dy

#endif
