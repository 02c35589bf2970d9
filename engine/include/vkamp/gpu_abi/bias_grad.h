// bias_grad.comp (ops::bias_add_backward): column sums of dy, in chunks of
// chunk_rows rows.
#ifndef VKAMP_INTERFACE_BIAS_GRAD_H
#define VKAMP_INTERFACE_BIAS_GRAD_H
#include "macros.h"

VKAMP_PUSH(BiasGradPush)
  uint rows;
  uint cols;
  uint accumulate;
  uint chunk_rows;
VKAMP_PUSH_END(BiasGradPush, p, 16)

VKAMP_SHADER(BiasGradShader, bias_grad, 3, BiasGradPush)  // dy, db, partial

#endif
