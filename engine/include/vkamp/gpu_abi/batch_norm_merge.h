// batch_norm_merge.comp (ops::batch_norm_statistics, batch_norm_grad_sums):
// the chunks' partials merged in order into 2c floats at out_at.
#ifndef VKAMP_INTERFACE_BATCH_NORM_MERGE_H
#define VKAMP_INTERFACE_BATCH_NORM_MERGE_H
#include "macros.h"

VKAMP_PUSH(BatchNormMergePush)
  uint rows;
  uint c;
  uint chunk_rows;
  uint chunks;
  uint out_at;
VKAMP_PUSH_END(BatchNormMergePush, p, 20)

VKAMP_SHADER_ONE_BUILD(BatchNormMergeShader, batch_norm_merge, 2, BatchNormMergePush)  // partial, out

#endif
