#include "vkamp/ops/gemm.hpp"

#include <cstdlib>

#include "op_util.hpp"

namespace vkamp::ops {

void gemm(Sequence& seq, Format fmt, const Gemm& g, BufferView a, BufferView b, BufferView c) {
  size_t eb = format_bytes(fmt);
  detail::require("gemm", "A", a, uint64_t(g.m) * g.k, eb);
  detail::require("gemm", "B", b, uint64_t(g.k) * g.n, eb);
  detail::require("gemm", "C", c, uint64_t(g.m) * g.n, eb);
  struct { uint32_t m, n, k; float alpha; uint32_t accumulate; } push{g.m, g.n, g.k, g.alpha, g.accumulate};
  // Shared-memory tiles on GPUs, direct loads on CPU drivers (gemm.comp);
  // VKAMP_GEMM_TILED=0/1 overrides, for benchmarks.
  uint32_t tiled = seq.context().info().type == VK_PHYSICAL_DEVICE_TYPE_CPU ? 0 : 1;
  if (const char* e = std::getenv("VKAMP_GEMM_TILED")) tiled = e[0] == '1';
  Kernel& kern = detail::kernel(seq, "gemm", fmt, 3, sizeof(push), {g.trans_a, g.trans_b, tiled});
  seq.dispatch(kern, {a, b, c}, push, {div_up(g.n, 64), div_up(g.m, 64)}, "gemm");
}

void linear_forward(Sequence& seq, Format fmt, BufferView x, BufferView w, BufferView y,
                    uint32_t batch, uint32_t in, uint32_t out) {
  gemm(seq, fmt, {.m = batch, .n = out, .k = in, .trans_b = true}, x, w, y);
}

void linear_backward_input(Sequence& seq, Format fmt, BufferView dy, BufferView w, BufferView dx,
                           uint32_t batch, uint32_t in, uint32_t out) {
  gemm(seq, fmt, {.m = batch, .n = in, .k = out}, dy, w, dx);
}

void linear_backward_weight(Sequence& seq, Format fmt, BufferView dy, BufferView x, BufferView dw,
                            uint32_t batch, uint32_t in, uint32_t out, bool accumulate) {
  gemm(seq, fmt, {.m = out, .n = in, .k = batch, .trans_a = true, .accumulate = accumulate}, dy, x, dw);
}

}  // namespace vkamp::ops
