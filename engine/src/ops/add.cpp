#include "vkamp/ops/add.hpp"

#include "vkamp/gpu_abi/add.h"
#include "op_util.hpp"
#include "vkamp/ops/scale.hpp"

namespace vkamp::ops {

void add_forward(Sequence& seq, Format fmt, BufferView a, BufferView b, BufferView y, uint32_t n) {
  size_t eb = format_bytes(fmt);
  detail::require("add", "a", a, n, eb);
  detail::require("add", "b", b, n, eb);
  detail::require("add", "y", y, n, eb);
  const shader::AddPush push{n};
  auto k = detail::kernel<shader::AddShader>(seq, fmt);
  seq.dispatch(k, {a, b, y}, push, detail::grid_stride_groups(n), "add");
}

void add_backward(Sequence& seq, Format fmt, BufferView dy, BufferView dx, uint32_t n, bool accumulate) {
  if (accumulate) add_forward(seq, fmt, dx, dy, dx, n);
  else scale(seq, fmt, dy, dx, n, 1.0f);  // a copy: x * 1 is exact in every format
}

}  // namespace vkamp::ops
