// accuracy.comp (train::Evaluator): counts the rows whose largest logit is
// the label.
#ifndef VKAMP_INTERFACE_ACCURACY_H
#define VKAMP_INTERFACE_ACCURACY_H
#include "macros.h"

VKAMP_PUSH(AccuracyPush)
  uint rows;
  uint classes;
VKAMP_PUSH_END(AccuracyPush, p, 8)

VKAMP_SHADER(AccuracyShader, accuracy, 3, AccuracyPush)  // logits, labels, correct

#endif
