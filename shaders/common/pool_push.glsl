// The push constants of pool.comp and pool_grad.comp (ops::Pool2d), with
// the fast divisors (fastdiv.glsl) of the sizes they divide by. Mirrored by
// struct PoolPush in engine/src/ops/pool.cpp.
#ifndef VKAMP_POOL_PUSH_GLSL
#define VKAMP_POOL_PUSH_GLSL
layout(push_constant) uniform Push {
  uint n;  // elements the threads cover: y forward; dx backward, y when per window
  uint in_h, in_w, channels;
  uint out_h, out_w;
  uint window, stride;
  uvec2 by_channels, by_out_w, by_out_h, by_in_w, by_in_h, by_stride;
} p;
#endif
