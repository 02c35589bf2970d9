// convert.comp (ops::convert_from_f32/convert_to_f32): fp32 <-> the storage
// format, over n elements.
#ifndef VKAMP_INTERFACE_CONVERT_H
#define VKAMP_INTERFACE_CONVERT_H
#include "macros.h"

VKAMP_PUSH(ConvertPush)
  uint n;
VKAMP_PUSH_END(ConvertPush, p, 4)

VKAMP_SHADER(ConvertShader, convert, 2, ConvertPush)  // f32, 16-bit

#endif
