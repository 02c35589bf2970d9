// conv_direct.comp (ops::conv2d_forward_direct): the shape, with the fast
// divisors (fastdiv.glsl) of the sizes it divides by.
#ifndef VKAMP_INTERFACE_CONV_DIRECT_H
#define VKAMP_INTERFACE_CONV_DIRECT_H
#include "macros.h"

VKAMP_PUSH(ConvDirectPush)
  uint n;  // y elements: batch * out_h * out_w * out_c
  uint in_h, in_w, in_c;
  uint out_h, out_w, out_c;
  uint kernel, stride, pad;
  uvec2 by_out_c, by_out_w, by_out_h;  // fast divisors (fastdiv.glsl)
VKAMP_PUSH_END(ConvDirectPush, p, 64)

VKAMP_SHADER(ConvDirectShader, conv_direct, 4, ConvDirectPush)  // x, w, bias, y

#endif
