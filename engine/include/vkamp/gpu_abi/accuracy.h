// accuracy.comp (train::Evaluator): counts the rows whose largest logit is
// the label, over a chunk of `rows` rows of logits (one binding's worth),
// rows [first, first + rows) of the labels.
#ifndef VKAMP_INTERFACE_ACCURACY_H
#define VKAMP_INTERFACE_ACCURACY_H
#include "macros.h"

VKAMP_PUSH(AccuracyPush)
  uint rows;
  uint classes;
  uint first;
VKAMP_PUSH_END(AccuracyPush, p, 12)

VKAMP_SHADER(AccuracyShader, accuracy, 3, AccuracyPush)  // logits, labels, correct

#endif
