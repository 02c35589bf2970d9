#include "vkamp/ops/activation.hpp"

#include "vkamp/gpu_abi/activation.h"
#include "op_util.hpp"

namespace vkamp::ops {

namespace {
void run(Sequence& seq, Format fmt, Activation act, uint32_t backward, BufferView x, BufferView dy,
         BufferView out, uint32_t n) {
  size_t eb = format_bytes(fmt);
  detail::require("activation", "x", x, n, eb);
  detail::require("activation", "dy", dy, n, eb);
  detail::require("activation", "out", out, n, eb);
  const shader::ActivationPush push{n};
  auto k = detail::kernel<shader::ActivationShader>(seq, fmt, {uint32_t(act), backward});
  seq.dispatch(k, {x, dy, out}, push, detail::grid_stride_groups(n), activation_name(act));
}
}  // namespace

void activation_forward(Sequence& seq, Format fmt, Activation act, BufferView x, BufferView y, uint32_t n) {
  run(seq, fmt, act, 0, x, x, y, n);  // dy is unused forward; x stands in
}

void activation_backward(Sequence& seq, Format fmt, Activation act, BufferView x, BufferView dy,
                         BufferView dx, uint32_t n) {
  run(seq, fmt, act, 1, x, dy, dx, n);
}

}  // namespace vkamp::ops
