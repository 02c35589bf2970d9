// softmax_xent.comp and softmax_xent_grad.comp (ops::softmax_xent_forward/
// backward): a chunk of `rows` rows of `classes` logits (one binding's
// worth), rows [first, first + rows) of the labels and of the per-row
// losses; the count of targets is at row_loss[count_index] (the whole
// batch's row count).
#ifndef VKAMP_INTERFACE_SOFTMAX_XENT_H
#define VKAMP_INTERFACE_SOFTMAX_XENT_H
#include "macros.h"

VKAMP_PUSH(SoftmaxXentPush)
  uint rows;
  uint classes;
  uint first;
  uint count_index;
VKAMP_PUSH_END(SoftmaxXentPush, p, 16)

VKAMP_SHADER(SoftmaxXentShader, softmax_xent, 3, SoftmaxXentPush)  // logits, labels, row_loss
VKAMP_SHADER(SoftmaxXentGradShader, softmax_xent_grad, 5, SoftmaxXentPush)  // logits, labels, scale, targets, dlogits

#endif
