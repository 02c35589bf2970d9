// batch_norm_commit.comp (ops::batch_norm_commit): `micro_batches` stats
// blocks of 2c floats from pending_at folded into the running buffers;
// rows: the rows of one micro-batch. *_at: element offsets in the bindings.
#ifndef VKAMP_INTERFACE_BATCH_NORM_COMMIT_H
#define VKAMP_INTERFACE_BATCH_NORM_COMMIT_H
#include "macros.h"

VKAMP_PUSH(BatchNormCommitPush)
  uint c;
  uint micro_batches;
  uint rows;
  float momentum;
  uint pending_at;
  uint mean_at;
  uint var_at;
  uint tracked_at;
VKAMP_PUSH_END(BatchNormCommitPush, p, 32)

// state, pending, running_mean, running_var, num_batches_tracked
VKAMP_SHADER_ONE_BUILD(BatchNormCommitShader, batch_norm_commit, 5, BatchNormCommitPush)

#endif
