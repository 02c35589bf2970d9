// xent_mean.comp (ops::softmax_xent_forward): the mean of the per-row
// losses over the rows that are targets, and their count.
#ifndef VKAMP_INTERFACE_XENT_MEAN_H
#define VKAMP_INTERFACE_XENT_MEAN_H
#include "macros.h"

VKAMP_PUSH(XentMeanPush)
  uint rows;
  uint index;
VKAMP_PUSH_END(XentMeanPush, p, 8)

VKAMP_SHADER_ONE_BUILD(XentMeanShader, xent_mean, 3, XentMeanPush)  // row_loss (+ count), labels, out

#endif
