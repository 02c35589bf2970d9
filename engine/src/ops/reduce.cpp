#include "vkamp/ops/reduce.hpp"

#include "vkamp/gpu_abi/sum.h"
#include "vkamp/gpu_abi/sumsq.h"
#include "op_util.hpp"

namespace vkamp::ops {
namespace {
// Stage one uses at most this many workgroups, so stage two (one
// workgroup) stays short.
constexpr uint32_t kMaxPartials = 1024;
uint32_t partial_count(uint32_t n) { return std::max(1u, std::min(div_up(n, 256), kMaxPartials)); }
}  // namespace

size_t reduce_scratch_bytes(uint32_t n) { return size_t(partial_count(n)) * 4; }

void sum_squares(Sequence& seq, Format fmt, BufferView x, const BufferView* target, uint32_t n,
                 const Buffer& scratch, BufferView out, uint32_t out_index, float factor) {
  size_t eb = format_bytes(fmt);
  detail::require("sum_squares", "x", x, n, eb);
  if (target) detail::require("sum_squares", "target", *target, n, eb);
  uint32_t groups = partial_count(n);
  detail::require("sum_squares", "scratch", scratch, groups, 4);
  const shader::SumsqPush push{n};
  auto k = detail::kernel<shader::SumsqShader>(seq, fmt, {target ? 1u : 0u});
  seq.dispatch(k, {x, target ? *target : x, scratch}, push, {groups}, "sumsq");
  sum_f32(seq, scratch, groups, out, out_index, factor);
}

void sum_f32(Sequence& seq, BufferView x, uint32_t n, BufferView out, uint32_t out_index, float factor) {
  detail::require("sum_f32", "x", x, n, 4);
  detail::require("sum_f32", "out", out, uint64_t(out_index) + 1, 4);
  const shader::SumPush push{n, out_index, factor};
  auto k = seq.context().kernel<shader::SumShader>();
  seq.dispatch(k, {x, out}, push, {1}, "sum");
}

}  // namespace vkamp::ops
