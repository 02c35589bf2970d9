// im2col.comp and col2im.comp (ops::Conv2d): the shape, with the fast
// divisors (fastdiv.glsl) of the sizes they divide by.
#ifndef VKAMP_INTERFACE_CONV_H
#define VKAMP_INTERFACE_CONV_H
#include "macros.h"

VKAMP_PUSH(ConvPush)
  uint n;  // elements of the output: col for im2col, dx for col2im
  uint in_h, in_w, in_c;
  uint out_h, out_w;
  uint kernel, stride, pad;
  uint unused;
  uvec2 by_patch, by_in_c, by_kernel, by_out_w, by_out_h, by_in_w, by_in_h, by_stride;
VKAMP_PUSH_END(ConvPush, p, 104)

VKAMP_SHADER(Im2colShader, im2col, 2, ConvPush)  // x, col
VKAMP_SHADER(Col2imShader, col2im, 2, ConvPush)  // dcol, dx

#endif
