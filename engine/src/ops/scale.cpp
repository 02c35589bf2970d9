#include "vkamp/ops/scale.hpp"

#include "vkamp/gpu_abi/scale.h"
#include "op_util.hpp"
#include "vkamp/error.hpp"

namespace vkamp::ops {

void scale(Sequence& seq, Format fmt, BufferView x, BufferView y, uint32_t n, float factor,
           ScaleBy by, const Buffer* s, uint32_t index) {
  size_t eb = format_bytes(fmt);
  detail::require("scale", "x", x, n, eb);
  detail::require("scale", "y", y, n, eb);
  if (by != ScaleBy::Constant && !s) throw Error("scale: a buffer scale needs the scale buffer");
  if (by != ScaleBy::Constant && (uint64_t(index) + 1) * 4 > s->bytes())
    throw Error("scale: scalar " + std::to_string(index) + " is past the end of the scale buffer");
  const shader::ScalePush push{n, factor, index};
  auto k = detail::kernel<shader::ScaleShader>(seq, fmt, {uint32_t(by)});
  // The constant form still binds a buffer; x is as good as any.
  BufferView sv = s ? BufferView(*s) : x;
  seq.dispatch(k, {x, y, sv}, push, detail::grid_stride_groups(n), "scale");
}

}  // namespace vkamp::ops
