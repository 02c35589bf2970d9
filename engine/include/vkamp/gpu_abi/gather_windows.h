// gather_windows.comp (train::BatchFeeder): each example's window of tokens
// and its next tokens, from the token stream.
#ifndef VKAMP_INTERFACE_GATHER_WINDOWS_H
#define VKAMP_INTERFACE_GATHER_WINDOWS_H
#include "macros.h"

VKAMP_PUSH(GatherWindowsPush)
  uint rows, width, slots, micro, stride;
VKAMP_PUSH_END(GatherWindowsPush, p, 20)

VKAMP_SHADER_ONE_BUILD(GatherWindowsShader, gather_windows, 5, GatherWindowsPush)  // state, ids, src, x, y

#endif
