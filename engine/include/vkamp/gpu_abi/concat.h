// concat.comp (ops::concat): copies (or adds) `width` columns of each of
// `rows` rows between two row-major tensors.
#ifndef VKAMP_INTERFACE_CONCAT_H
#define VKAMP_INTERFACE_CONCAT_H
#include "macros.h"

VKAMP_PUSH(ConcatPush)
  uint rows, width;
  uint src_cols, src_off;
  uint dst_cols, dst_off;
  uint accumulate;
VKAMP_PUSH_END(ConcatPush, p, 28)

VKAMP_SHADER(ConcatShader, concat, 2, ConcatPush)  // src, dst

#endif
