#include "vkamp/ops/convert.hpp"

#include "vkamp/gpu_abi/convert.h"
#include "op_util.hpp"
#include "vkamp/error.hpp"

namespace vkamp::ops {
namespace {

constexpr uint32_t kMaxGroups = 65535;

void convert(Sequence& seq, Format fmt, BufferView f32, BufferView other, uint32_t n, uint32_t dir, bool accumulate) {
  if (fmt == Format::F32) throw Error("convert: fp32 to fp32 is a copy, not a conversion");
  detail::require("convert", "fp32 buffer", f32, n, 4);
  detail::require("convert", "16-bit buffer", other, n, format_bytes(fmt));
  const shader::ConvertPush push{n, accumulate ? 1u : 0u};
  auto k = detail::kernel<shader::ConvertShader>(seq, fmt, {dir});
  seq.dispatch(k, {f32, other}, push, {std::min(div_up(n, 256), kMaxGroups)}, "convert");
}

}  // namespace

void convert_from_f32(Sequence& seq, Format fmt, BufferView src, BufferView dst, uint32_t n, bool accumulate) {
  convert(seq, fmt, src, dst, n, 0, accumulate);
}

void convert_to_f32(Sequence& seq, Format fmt, BufferView src, BufferView dst, uint32_t n, bool accumulate) {
  convert(seq, fmt, dst, src, n, 1, accumulate);
}

}  // namespace vkamp::ops
