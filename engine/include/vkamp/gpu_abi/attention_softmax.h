// attention_softmax.comp and attention_softmax_grad.comp (ops::attention):
// the causal softmax over `rows` rows of `seq` scores, and its backward.
// The rows of each (example, head) are the last `queries` positions of the
// seq: all of them in training (queries = seq), the newest alone when
// decoding with cached keys (queries = 1). Row r is position
// seq - queries + r % queries and sees the keys up to it.
#ifndef VKAMP_INTERFACE_ATTENTION_SOFTMAX_H
#define VKAMP_INTERFACE_ATTENTION_SOFTMAX_H
#include "macros.h"

VKAMP_PUSH(AttentionSoftmaxPush)
  uint rows;
  uint seq;
  uint queries;
VKAMP_PUSH_END(AttentionSoftmaxPush, p, 12)

VKAMP_SHADER(AttentionSoftmaxShader, attention_softmax, 1, AttentionSoftmaxPush)  // scores (in place)
VKAMP_SHADER(AttentionSoftmaxGradShader, attention_softmax_grad, 2, AttentionSoftmaxPush)  // probs, grad

#endif
