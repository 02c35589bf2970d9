#include "vkamp/ops/pool.hpp"

#include <cstddef>
#include <limits>
#include <string>

#include "vkamp/gpu_abi/pool.h"
#include "op_util.hpp"
#include "vkamp/error.hpp"

namespace vkamp::ops {
namespace {

std::string describe(const Pool2d& p) {
  return std::string(p.kind == PoolKind::Max ? "max" : "average") + " pool batch " + std::to_string(p.batch) +
         ", input " + std::to_string(p.in_h) + "x" + std::to_string(p.in_w) + "x" + std::to_string(p.channels) +
         ", window " + std::to_string(p.window) + ", stride " + std::to_string(p.stride);
}

// The shape as pool.comp and pool_grad.comp take it (vkamp/gpu_abi/pool.h).
shader::PoolPush push_for(const Pool2d& p, uint64_t n) {
  using detail::fast_divisor;
  shader::PoolPush q{};
  q.n = uint32_t(n);
  q.in_h = p.in_h;
  q.in_w = p.in_w;
  q.channels = p.channels;
  q.out_h = p.out_h();
  q.out_w = p.out_w();
  q.window = p.window;
  q.stride = p.stride;
  q.by_channels = fast_divisor(p.channels);
  q.by_out_w = fast_divisor(p.out_w());
  q.by_out_h = fast_divisor(p.out_h());
  q.by_in_w = fast_divisor(p.in_w);
  q.by_in_h = fast_divisor(p.in_h);
  q.by_stride = fast_divisor(p.stride);
  return q;
}

const char* label(const Pool2d& p, bool backward) {
  if (p.kind == PoolKind::Max) return backward ? "maxpool_grad" : "maxpool";
  return backward ? "avgpool_grad" : "avgpool";
}

// The backward per window (pool_grad.comp WINDOWS) wherever windows do not
// overlap: each window is scanned once instead of once per input in it, and
// the bits are the gather's. KernelPaths::pool_grad_window overrides, for
// tests; overlapping windows always gather.
bool per_window(const Context& ctx, const Pool2d& p) {
  return ctx.paths().pool_grad_window.value_or(true) && p.stride >= p.window;
}

}  // namespace

void validate(const Pool2d& p) {
  if (p.kind != PoolKind::Max && p.kind != PoolKind::Average)
    throw Error("pool: unknown kind " + std::to_string(uint32_t(p.kind)));
  if (p.batch == 0 || p.in_h == 0 || p.in_w == 0 || p.channels == 0 || p.window == 0 || p.stride == 0)
    throw Error(describe(p) + ": every size, the window and the stride must be at least 1");
  if (p.window > p.in_h || p.window > p.in_w) throw Error(describe(p) + ": the window is larger than the input");
  if (p.input_elements() > detail::kMaxIndexedElements)
    throw Error(describe(p) + ": 2^31 input elements or more (the shaders index in 32 bits)");
}

void pool2d_forward(Sequence& seq, Format fmt, const Pool2d& p, BufferView x, BufferView y) {
  validate(p);
  size_t eb = format_bytes(fmt);
  detail::require("pool2d_forward", "x", x, p.input_elements(), eb);
  detail::require("pool2d_forward", "y", y, p.output_elements(), eb);
  const shader::PoolPush push = push_for(p, p.output_elements());
  auto k = detail::kernel<shader::PoolShader>(seq, fmt, {uint32_t(p.kind)});
  seq.dispatch(k, {x, y}, push, detail::grid_stride_groups(p.output_elements()), label(p, false));
}

void pool2d_backward(Sequence& seq, Format fmt, const Pool2d& p, BufferView x, BufferView dy, BufferView dx) {
  validate(p);
  size_t eb = format_bytes(fmt);
  // Average pooling never reads x; any buffer will do there.
  if (p.kind == PoolKind::Max) detail::require("pool2d_backward", "x", x, p.input_elements(), eb);
  detail::require("pool2d_backward", "dy", dy, p.output_elements(), eb);
  detail::require("pool2d_backward", "dx", dx, p.input_elements(), eb);
  const bool windows = per_window(seq.context(), p);
  const uint64_t threads = windows ? p.output_elements() : p.input_elements();
  const shader::PoolPush push = push_for(p, threads);
  auto k = detail::kernel<shader::PoolGradShader>(seq, fmt, {uint32_t(p.kind), uint32_t(windows)});
  seq.dispatch(k, {x, dy, dx}, push, detail::grid_stride_groups(threads), label(p, true));
}

}  // namespace vkamp::ops
