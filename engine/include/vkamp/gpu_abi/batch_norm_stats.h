// batch_norm_stats.comp (ops::batch_norm_statistics): per chunk of
// chunk_rows rows, each channel's mean and M2, fp32.
#ifndef VKAMP_INTERFACE_BATCH_NORM_STATS_H
#define VKAMP_INTERFACE_BATCH_NORM_STATS_H
#include "macros.h"

VKAMP_PUSH(BatchNormStatsPush)
  uint rows;
  uint c;
  uint chunk_rows;
VKAMP_PUSH_END(BatchNormStatsPush, p, 12)

VKAMP_SHADER(BatchNormStatsShader, batch_norm_stats, 2, BatchNormStatsPush)  // x, partial

#endif
