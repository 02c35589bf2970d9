#include "vkamp/ops/losses.hpp"

#include "vkamp/gpu_abi/accuracy.h"
#include "vkamp/gpu_abi/mse_grad.h"
#include "vkamp/gpu_abi/softmax_xent.h"
#include "vkamp/gpu_abi/xent_mean.h"
#include "op_util.hpp"
#include "vkamp/error.hpp"
#include "row_plan.hpp"
#include "vkamp/ops/reduce.hpp"

namespace vkamp::ops {

void softmax_xent_forward(Sequence& seq, Format fmt, BufferView logits, BufferView labels,
                          BufferView row_loss, BufferView loss, uint32_t rows, uint32_t classes,
                          uint32_t out_index) {
  softmax_xent_rows(seq, fmt, logits, labels, row_loss, 0, rows, rows, classes);
  xent_mean(seq, row_loss, labels, loss, rows, out_index);
}

void softmax_xent_rows(Sequence& seq, Format fmt, BufferView logits, BufferView labels, BufferView row_loss,
                       uint32_t first, uint32_t n, uint32_t rows, uint32_t classes) {
  const size_t eb = format_bytes(fmt);
  detail::require("softmax_xent_forward", "logits", logits, uint64_t(n) * classes, eb);
  detail::require("softmax_xent_forward", "labels", labels, rows, 4);
  detail::require("softmax_xent_forward", "row_loss", row_loss, uint64_t(rows) + 1, 4);
  if (uint64_t(first) + n > rows) throw Error("softmax_xent_forward: rows past the batch's");
  const uint64_t row_bytes = uint64_t(classes) * eb;
  detail::for_each_binding_chunk(seq.context(), "softmax_xent_forward", row_bytes, n, [&](uint32_t at, uint32_t c) {
    const detail::RowPlan plan = detail::row_plan(seq.context(), c, classes, 2);
    auto k = detail::kernel<shader::SoftmaxXentShader>(seq, fmt, {plan.thread});
    seq.dispatch(k, {detail::row_view(logits, row_bytes, at, c), labels, row_loss},
                 shader::SoftmaxXentPush{c, classes, first + at, rows}, plan.groups, "softmax_xent");
  });
}

void xent_mean(Sequence& seq, BufferView row_loss, BufferView labels, BufferView loss, uint32_t rows,
               uint32_t out_index) {
  detail::require("xent_mean", "row_loss", row_loss, uint64_t(rows) + 1, 4);
  detail::require("xent_mean", "labels", labels, rows, 4);
  detail::require("xent_mean", "loss", loss, uint64_t(out_index) + 1, 4);
  auto mean = seq.context().kernel<shader::XentMeanShader>();
  seq.dispatch(mean, {row_loss, labels, loss}, shader::XentMeanPush{rows, out_index}, {1}, "xent_mean");
}

void softmax_xent_backward(Sequence& seq, Format fmt, BufferView logits, BufferView labels,
                           BufferView scale, BufferView row_loss, BufferView dlogits, uint32_t rows,
                           uint32_t classes) {
  softmax_xent_grad_rows(seq, fmt, logits, labels, scale, row_loss, dlogits, 0, rows, rows, classes);
}

void softmax_xent_grad_rows(Sequence& seq, Format fmt, BufferView logits, BufferView labels, BufferView scale,
                            BufferView row_loss, BufferView dlogits, uint32_t first, uint32_t n, uint32_t rows,
                            uint32_t classes) {
  const size_t eb = format_bytes(fmt);
  detail::require("softmax_xent_backward", "logits", logits, uint64_t(n) * classes, eb);
  detail::require("softmax_xent_backward", "labels", labels, rows, 4);
  detail::require("softmax_xent_backward", "scale", scale, 1, 4);
  detail::require("softmax_xent_backward", "row_loss", row_loss, uint64_t(rows) + 1, 4);
  detail::require("softmax_xent_backward", "dlogits", dlogits, uint64_t(n) * classes, eb);
  if (uint64_t(first) + n > rows) throw Error("softmax_xent_backward: rows past the batch's");
  const uint64_t row_bytes = uint64_t(classes) * eb;
  detail::for_each_binding_chunk(seq.context(), "softmax_xent_backward", row_bytes, n, [&](uint32_t at, uint32_t c) {
    const detail::RowPlan plan = detail::row_plan(seq.context(), c, classes, 3);
    auto k = detail::kernel<shader::SoftmaxXentGradShader>(seq, fmt, {plan.thread});
    seq.dispatch(k,
                 {detail::row_view(logits, row_bytes, at, c), labels, scale, row_loss,
                  detail::row_view(dlogits, row_bytes, at, c)},
                 shader::SoftmaxXentPush{c, classes, first + at, rows}, plan.groups, "softmax_xent_grad");
  });
}

void count_correct(Sequence& seq, Format fmt, BufferView logits, BufferView labels, BufferView correct,
                   uint32_t rows, uint32_t classes, uint32_t first) {
  const size_t eb = format_bytes(fmt);
  detail::require("count_correct", "logits", logits, uint64_t(rows) * classes, eb);
  detail::require("count_correct", "labels", labels, uint64_t(first) + rows, 4);
  detail::require("count_correct", "correct", correct, 1, 4);
  const uint64_t row_bytes = uint64_t(classes) * eb;
  detail::for_each_binding_chunk(seq.context(), "count_correct", row_bytes, rows, [&](uint32_t at, uint32_t n) {
    const detail::RowPlan plan = detail::row_plan(seq.context(), n, classes, 2);
    auto k = detail::kernel<shader::AccuracyShader>(seq, fmt, {plan.thread});
    seq.dispatch(k, {detail::row_view(logits, row_bytes, at, n), labels, correct},
                 shader::AccuracyPush{n, classes, first + at}, plan.groups, "accuracy");
  });
}

void mse_forward(Sequence& seq, Format fmt, BufferView y, BufferView t, const Buffer& scratch,
                 BufferView loss, uint32_t n, uint32_t out_index) {
  sum_squares(seq, fmt, y, &t, n, scratch, loss, out_index, 1.0f / float(n));
}

void mse_backward(Sequence& seq, Format fmt, BufferView y, BufferView t, BufferView scale,
                  BufferView dy, uint32_t n) {
  size_t eb = format_bytes(fmt);
  detail::require("mse_backward", "y", y, n, eb);
  detail::require("mse_backward", "t", t, n, eb);
  detail::require("mse_backward", "scale", scale, 1, 4);
  detail::require("mse_backward", "dy", dy, n, eb);
  const shader::MseGradPush push{n};
  auto k = detail::kernel<shader::MseGradShader>(seq, fmt);
  seq.dispatch(k, {y, t, scale, dy}, push, detail::grid_stride_groups(n), "mse_grad");
}

}  // namespace vkamp::ops
