// softmax_xent.comp and softmax_xent_grad.comp (ops::softmax_xent_forward/
// backward): `rows` rows of `classes` logits.
#ifndef VKAMP_INTERFACE_SOFTMAX_XENT_H
#define VKAMP_INTERFACE_SOFTMAX_XENT_H
#include "macros.h"

VKAMP_PUSH(SoftmaxXentPush)
  uint rows;
  uint classes;
VKAMP_PUSH_END(SoftmaxXentPush, p, 8)

VKAMP_SHADER(SoftmaxXentShader, softmax_xent, 3, SoftmaxXentPush)  // logits, labels, row_loss
VKAMP_SHADER(SoftmaxXentGradShader, softmax_xent_grad, 5, SoftmaxXentPush)  // logits, labels, scale, targets, dlogits

#endif
