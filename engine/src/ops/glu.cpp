#include "vkamp/ops/glu.hpp"

#include "vkamp/gpu_abi/glu.h"
#include "op_util.hpp"

namespace vkamp::ops {

namespace {

uint32_t mode(GradWrite w) {
  switch (w) {
    case GradWrite::Skip: return shader::kGluSkip;
    case GradWrite::Write: return shader::kGluWrite;
    case GradWrite::Add: return shader::kGluAdd;
  }
  return shader::kGluSkip;
}

}  // namespace

void glu_forward(Sequence& seq, Format fmt, Activation act, BufferView gate, BufferView up, BufferView y, uint32_t n) {
  const size_t eb = format_bytes(fmt);
  detail::require("glu_forward", "gate", gate, n, eb);
  detail::require("glu_forward", "up", up, n, eb);
  detail::require("glu_forward", "y", y, n, eb);
  if (n == 0) return;
  auto k = detail::kernel<shader::GluShader>(seq, fmt, {uint32_t(act), 0u});
  // dy and dup are unused forward; gate and y stand in.
  seq.dispatch(k, {gate, up, gate, y, y}, shader::GluPush{n, 0, 0}, detail::grid_stride_groups(n), "glu");
}

void glu_backward(Sequence& seq, Format fmt, Activation act, BufferView gate, BufferView up, BufferView dy,
                  BufferView dgate, GradWrite gate_write, BufferView dup, GradWrite up_write, uint32_t n) {
  const size_t eb = format_bytes(fmt);
  detail::require("glu_backward", "gate", gate, n, eb);
  detail::require("glu_backward", "up", up, n, eb);
  detail::require("glu_backward", "dy", dy, n, eb);
  if (gate_write != GradWrite::Skip) detail::require("glu_backward", "dgate", dgate, n, eb);
  if (up_write != GradWrite::Skip) detail::require("glu_backward", "dup", dup, n, eb);
  if (n == 0 || (gate_write == GradWrite::Skip && up_write == GradWrite::Skip)) return;
  auto k = detail::kernel<shader::GluShader>(seq, fmt, {uint32_t(act), 1u});
  seq.dispatch(k, {gate, up, dy, dgate, dup}, shader::GluPush{n, mode(gate_write), mode(up_write)},
               detail::grid_stride_groups(n), "glu_grad");
}

}  // namespace vkamp::ops
