// attention_softmax.comp and attention_softmax_grad.comp (ops::attention):
// the causal softmax over `rows` rows of `seq` scores, and its backward.
#ifndef VKAMP_INTERFACE_ATTENTION_SOFTMAX_H
#define VKAMP_INTERFACE_ATTENTION_SOFTMAX_H
#include "macros.h"

VKAMP_PUSH(AttentionSoftmaxPush)
  uint rows;
  uint seq;
VKAMP_PUSH_END(AttentionSoftmaxPush, p, 8)

VKAMP_SHADER(AttentionSoftmaxShader, attention_softmax, 1, AttentionSoftmaxPush)  // scores (in place)
VKAMP_SHADER(AttentionSoftmaxGradShader, attention_softmax_grad, 2, AttentionSoftmaxPush)  // probs, grad

#endif
