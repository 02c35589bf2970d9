// BatchNorm over the rows of a rows x c matrix, per channel (column): x is
// NHWC, so an image batch is rows = batch * h * w rows of c channels
// (BatchNorm2d), a vector batch rows = batch rows of c features
// (BatchNorm1d). x, y, dy and dx are in the storage format `fmt`; everything
// else (mean, var, weight, bias, the sums, the running buffers) is fp32,
// whatever the format (NNabla's mixed-precision rule: statistics stay fp32).
//
// Every reduction over rows is split into chunks of rows, one partial per
// chunk and channel, and the chunks combined in a fixed order: parallel,
// and the same bits on every run of a device (a GPU and a CPU driver chunk
// differently, so their last bits may differ). The scratch the chunks need
// is the op's own (Sequence::scratch), so no workspace is passed.
#pragma once
#include <cstdint>

#include "vkamp/buffer.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::ops {

inline constexpr float kBatchNormEps = 1e-5f;  // PyTorch's defaults
inline constexpr float kBatchNormMomentum = 0.1f;

// Per-channel batch mean and *biased* variance of x, in fp32, without
// cancellation at large offsets (a corrected two-pass sum per chunk, then
// two passes over the chunks' means: batch_norm_merge.comp): stats is
// 2 * c floats {mean[c], var[c]}. rows >= 1.
void batch_norm_statistics(Sequence& seq, Format fmt, BufferView x, BufferView stats, uint32_t rows, uint32_t c);

// y = (x - mean[ch]) / sqrt(var[ch] + eps) * weight[ch] + bias[ch]. mean and
// var: the batch's (training) or the running buffers (eval); all four fp32.
// An inf or NaN in x makes its channel's statistics, and so its whole
// column of y, NaN (as in PyTorch): it is never hidden.
void batch_norm_forward(Sequence& seq, Format fmt, BufferView x, BufferView mean, BufferView var,
                        BufferView weight, BufferView bias, BufferView y, uint32_t rows, uint32_t c,
                        float eps = kBatchNormEps);

// fp32 column sums for the backward: sums = {sum_r dy[c], sum_r dy * xhat[c]}, 2 * c floats.
void batch_norm_grad_sums(Sequence& seq, Format fmt, BufferView x, BufferView mean, BufferView var, BufferView dy,
                          BufferView sums, uint32_t rows, uint32_t c, float eps = kBatchNormEps);
// dweight = sum dy * xhat, dbias = sum dy, rounded once to fmt into the
// gradient views (each added to its old value when its flag is set).
void batch_norm_param_grads(Sequence& seq, Format fmt, BufferView sums, BufferView dweight, BufferView dbias,
                            uint32_t c, bool accumulate_weight, bool accumulate_bias);
// dx = weight * rstd / N * (N * dy - sum dy - xhat * sum dy * xhat), N = rows
// (+= when accumulate). mean and var: the forward's (batch statistics).
void batch_norm_backward_input(Sequence& seq, Format fmt, BufferView x, BufferView mean, BufferView var,
                               BufferView weight, BufferView dy, BufferView sums, BufferView dx, uint32_t rows,
                               uint32_t c, bool accumulate, float eps = kBatchNormEps);

// The running statistics' update, predicated on the step's decision exactly
// as the optimizer is (optimizer.comp: `if (st.apply == 0u) return;`): a
// skipped step writes nothing. `state` is the TrainState buffer. pending
// holds `micro_batches` stats blocks (2 * c floats each, as
// batch_norm_statistics writes them, in micro-batch order); each is folded
// in turn:
//   running_mean = (1 - m) * running_mean + m * mean,
//   running_var  = (1 - m) * running_var + m * var * n / (n - 1)
// with n = rows_per_micro_batch (PyTorch keeps the unbiased variance in the
// running buffer; n = 1 uses var as is), and num_batches_tracked (one fp32
// element) += 1 per block.
void batch_norm_commit(Sequence& seq, Buffer& state, BufferView pending, BufferView running_mean,
                       BufferView running_var, BufferView num_batches_tracked, uint32_t c,
                       uint32_t micro_batches, uint32_t rows_per_micro_batch, float momentum = kBatchNormMomentum);

}  // namespace vkamp::ops
