// convert.comp (ops::convert_from_f32/convert_to_f32): fp32 <-> the storage
// format, over n elements; accumulate != 0 adds the converted value to the
// destination's, rounded once (a cast's backward adding to a gradient).
#ifndef VKAMP_INTERFACE_CONVERT_H
#define VKAMP_INTERFACE_CONVERT_H
#include "macros.h"

VKAMP_PUSH(ConvertPush)
  uint n;
  uint accumulate;
VKAMP_PUSH_END(ConvertPush, p, 8)

VKAMP_SHADER(ConvertShader, convert, 2, ConvertPush)  // f32, 16-bit

#endif
