// pool.comp and pool_grad.comp (ops::Pool2d): the shape, with the fast
// divisors (fastdiv.glsl) of the sizes they divide by.
#ifndef VKAMP_INTERFACE_POOL_H
#define VKAMP_INTERFACE_POOL_H
#include "macros.h"

VKAMP_PUSH(PoolPush)
  uint n;  // elements the threads cover: y forward; dx backward, y when per window
  uint in_h, in_w, channels;
  uint out_h, out_w;
  uint window, stride;
  uvec2 by_channels, by_out_w, by_out_h, by_in_w, by_in_h, by_stride;
VKAMP_PUSH_END(PoolPush, p, 80)

VKAMP_SHADER(PoolShader, pool, 2, PoolPush)  // x, y
VKAMP_SHADER(PoolGradShader, pool_grad, 3, PoolPush)  // x, dy, dx

#endif
