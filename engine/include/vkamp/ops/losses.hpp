// Losses, computed in fp32 from logits/predictions in the storage format.
// Both give the mean over the batch (softmax cross-entropy: over its targets); their gradients are multiplied by a
// loss-scale value read from an fp32 GPU buffer, so dynamic loss scaling
// never needs the host.
#pragma once
#include <cstddef>
#include <cstdint>

#include "vkamp/buffer.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::ops {

// The fp32 scratch softmax_xent_forward needs for `rows` rows: each row's
// loss, then the count of targets, which the backward reads.
inline size_t softmax_xent_scratch_bytes(uint32_t rows) { return (size_t(rows) + 1) * 4; }

// loss[out_index] (fp32) = mean over the target rows r of
// logsumexp(logits[r,:]) - logits[r, labels[r]]. labels: uint32; a label
// with VKAMP_NOT_TARGET (gpu_abi/not_target.h) is no target, any other
// label >= classes gives NaN, as does a NaN or +inf logit.
// row_loss: softmax_xent_scratch_bytes(rows). Any vocabulary: a row is a
// workgroup's where it is long, and logits larger than one storage binding
// are read in chunks of rows (views of the one buffer, no copy); so are
// the backward's logits and dlogits.
void softmax_xent_forward(Sequence& seq, Format fmt, BufferView logits, BufferView labels,
                          BufferView row_loss, BufferView loss, uint32_t rows, uint32_t classes,
                          uint32_t out_index = 0);
// dlogits = (softmax(logits) - onehot(labels)) * scale[0] / targets, 0 in a
// row that is no target; row_loss: the scratch of the forward of the same
// logits and labels, recorded before (it holds the count of targets).
void softmax_xent_backward(Sequence& seq, Format fmt, BufferView logits, BufferView labels,
                           BufferView scale, BufferView row_loss, BufferView dlogits, uint32_t rows,
                           uint32_t classes);

// The two passes above, for a caller that holds the logits a block of rows
// at a time (train/logit_chunks.hpp): rows [first, first + n) of a batch
// of `rows` rows, `logits` (and dlogits) holding just those n. The same
// dispatches on the same rows as the whole batch's: the same bits.
// softmax_xent_rows writes those rows' losses; xent_mean then takes the
// mean over every row's (loss[out_index]) and writes the count of targets
// (row_loss[rows]) that softmax_xent_grad_rows reads.
void softmax_xent_rows(Sequence& seq, Format fmt, BufferView logits, BufferView labels, BufferView row_loss,
                       uint32_t first, uint32_t n, uint32_t rows, uint32_t classes);
void xent_mean(Sequence& seq, BufferView row_loss, BufferView labels, BufferView loss, uint32_t rows,
               uint32_t out_index = 0);
void softmax_xent_grad_rows(Sequence& seq, Format fmt, BufferView logits, BufferView labels, BufferView scale,
                            BufferView row_loss, BufferView dlogits, uint32_t first, uint32_t n, uint32_t rows,
                            uint32_t classes);

// correct[0] (uint32) += the rows whose largest logit (the lowest class on
// a tie) is their label; a row with a NaN never counts. The evaluator's
// accuracy. `logits` holds rows [first, first + rows) of those `labels` index.
void count_correct(Sequence& seq, Format fmt, BufferView logits, BufferView labels, BufferView correct,
                   uint32_t rows, uint32_t classes, uint32_t first = 0);

// loss[out_index] (fp32) = mean_i (y[i] - t[i])^2 over n = rows * cols values.
// scratch holds reduce_scratch_bytes(n).
void mse_forward(Sequence& seq, Format fmt, BufferView y, BufferView t, const Buffer& scratch,
                 BufferView loss, uint32_t n, uint32_t out_index = 0);
// dy = 2 (y - t) / n * scale[0].
void mse_backward(Sequence& seq, Format fmt, BufferView y, BufferView t, BufferView scale,
                  BufferView dy, uint32_t n);

}  // namespace vkamp::ops
