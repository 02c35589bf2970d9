// dropout.comp (ops::dropout): y = x * keep / (1 - p), each element's keep
// drawn by Philox4x32-10 from (seed, step, stream, salt) and its index.
#ifndef VKAMP_INTERFACE_DROPOUT_H
#define VKAMP_INTERFACE_DROPOUT_H
#include "macros.h"

VKAMP_PUSH(DropoutPush)
  uint n;
  uint threshold;      // keep an element when its 32-bit draw is >= threshold
  float scale;         // 1 / (1 - p), in fp32
  uint seed_lo, seed_hi;
  uint counter_word;   // the step number is counter[counter_word]
  uint stream;         // micro-batch and rank
  uint salt;           // the node
VKAMP_PUSH_END(DropoutPush, p, 32)

VKAMP_SHADER(DropoutShader, dropout, 3, DropoutPush)  // x, y, counter

#endif
