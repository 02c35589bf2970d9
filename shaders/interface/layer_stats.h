// layer_stats.comp (train::StepProgram, per-layer loss scaling): per
// parameter tensor, its gradient's largest finite |v| and non-finite count.
#ifndef VKAMP_INTERFACE_LAYER_STATS_H
#define VKAMP_INTERFACE_LAYER_STATS_H
#include "macros.h"

VKAMP_PUSH(LayerStatsPush)
  uint tensors;
VKAMP_PUSH_END(LayerStatsPush, p, 4)

// grads, grad_sum, tensor_ranges, stats
VKAMP_SHADER(LayerStatsShader, layer_stats, 4, LayerStatsPush)

#endif
