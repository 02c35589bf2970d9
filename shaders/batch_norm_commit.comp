#version 450
#extension GL_GOOGLE_include_directive : require
// BatchNorm's running statistics, committed in the step's update pass and
// predicated on its decision as the optimizer is: a skipped step (overflow,
// or an attempt that is retried) writes nothing, so an overflowing batch
// can never leave them NaN (PyTorch updates them in the forward:
// pytorch/pytorch#115500). One invocation per channel folds the micro-
// batches' stats blocks ({mean c, biased var c} each) in order:
//   running_mean = (1 - m) running_mean + m mean,
//   running_var  = (1 - m) running_var + m var n / (n - 1)
// (PyTorch's unbiased variance; n = 1 keeps var), and invocation 0 adds 1
// to num_batches_tracked per block. All fp32.
#include "vkamp/gpu_abi/train_state.h"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer State { TrainState st; };
layout(std430, binding = 1) readonly buffer Pending { float pending[]; };
layout(std430, binding = 2) buffer RunningMean { float running_mean[]; };
layout(std430, binding = 3) buffer RunningVar { float running_var[]; };
layout(std430, binding = 4) buffer Tracked { float num_batches_tracked[]; };
#include "vkamp/gpu_abi/batch_norm_commit.h"

void main() {
  if (st.apply == 0u) return;
  uint ch = gl_GlobalInvocationID.x;
  float m = p.momentum;
  float unbias = p.rows > 1u ? float(p.rows) / float(p.rows - 1u) : 1.0;
  if (ch < p.c) {
    float rm = running_mean[p.mean_at + ch], rv = running_var[p.var_at + ch];
    for (uint k = 0u; k < p.micro_batches; ++k) {
      uint block = p.pending_at + k * 2u * p.c;
      rm = (1.0 - m) * rm + m * pending[block + ch];
      rv = (1.0 - m) * rv + m * (pending[block + p.c + ch] * unbias);
    }
    running_mean[p.mean_at + ch] = rm;
    running_var[p.var_at + ch] = rv;
  }
  if (ch == 0u) {
    float t = num_batches_tracked[p.tracked_at];
    for (uint k = 0u; k < p.micro_batches; ++k) t += 1.0;
    num_batches_tracked[p.tracked_at] = t;
  }
}
