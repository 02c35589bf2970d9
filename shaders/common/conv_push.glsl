// The push constants of im2col.comp and col2im.comp (ops::Conv2d), with the
// fast divisors (fastdiv.glsl) of the sizes they divide by. Mirrored by
// struct ConvPush in engine/src/ops/conv.cpp.
#ifndef VKAMP_CONV_PUSH_GLSL
#define VKAMP_CONV_PUSH_GLSL
layout(push_constant) uniform Push {
  uint n;  // elements of the output: col for im2col, dx for col2im
  uint in_h, in_w, in_c;
  uint out_h, out_w;
  uint kernel, stride, pad;
  uint unused;
  uvec2 by_patch, by_in_c, by_kernel, by_out_w, by_out_h, by_in_w, by_in_h, by_stride;
} p;
#endif
