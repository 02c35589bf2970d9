#include "vkamp/ops/bias.hpp"

#include "op_util.hpp"

namespace vkamp::ops {

void bias_add_forward(Sequence& seq, Format fmt, BufferView y, BufferView b, uint32_t rows, uint32_t cols) {
  size_t eb = format_bytes(fmt);
  uint32_t n = rows * cols;
  detail::require("bias_add_forward", "y", y, n, eb);
  detail::require("bias_add_forward", "bias", b, cols, eb);
  struct { uint32_t n, cols; } push{n, cols};
  Kernel& k = detail::kernel(seq, "bias_add", fmt, 2, sizeof(push));
  seq.dispatch(k, {y, b}, push, {std::min(div_up(n, 256), 65535u)}, "bias_add");
}

void bias_add_backward(Sequence& seq, Format fmt, BufferView dy, BufferView db, uint32_t rows,
                       uint32_t cols, bool accumulate) {
  size_t eb = format_bytes(fmt);
  detail::require("bias_add_backward", "dy", dy, uint64_t(rows) * cols, eb);
  detail::require("bias_add_backward", "db", db, cols, eb);
  struct { uint32_t rows, cols, accumulate; } push{rows, cols, accumulate};
  Kernel& k = detail::kernel(seq, "bias_grad", fmt, 2, sizeof(push));
  seq.dispatch(k, {dy, db}, push, {div_up(cols, 256)}, "bias_grad");
}

}  // namespace vkamp::ops
