#include "vkamp/ops/conv.hpp"

#include <cstddef>
#include <limits>
#include <string>

#include "vkamp/gpu_abi/conv.h"
#include "vkamp/gpu_abi/conv_direct.h"
#include "op_util.hpp"
#include "vkamp/error.hpp"
#include "vkamp/ops/bias.hpp"
#include "vkamp/ops/gemm.hpp"

namespace vkamp::ops {
namespace {

std::string describe(const Conv2d& c) {
  return "conv2d batch " + std::to_string(c.batch) + ", input " + std::to_string(c.in_h) + "x" +
         std::to_string(c.in_w) + "x" + std::to_string(c.in_c) + ", " + std::to_string(c.out_c) +
         " outputs, kernel " + std::to_string(c.kernel) + ", stride " + std::to_string(c.stride) + ", pad " +
         std::to_string(c.pad);
}

// The shape as im2col.comp and col2im.comp take it (vkamp/gpu_abi/conv.h).
shader::ConvPush push_for(const Conv2d& c, uint64_t n) {
  using detail::fast_divisor;
  shader::ConvPush p{};
  p.n = uint32_t(n);
  p.in_h = c.in_h;
  p.in_w = c.in_w;
  p.in_c = c.in_c;
  p.out_h = c.out_h();
  p.out_w = c.out_w();
  p.kernel = c.kernel;
  p.stride = c.stride;
  p.pad = c.pad;
  p.by_patch = fast_divisor(c.col_cols());
  p.by_in_c = fast_divisor(c.in_c);
  p.by_kernel = fast_divisor(c.kernel);
  p.by_out_w = fast_divisor(c.out_w());
  p.by_out_h = fast_divisor(c.out_h());
  p.by_in_w = fast_divisor(c.in_w);
  p.by_in_h = fast_divisor(c.in_h);
  p.by_stride = fast_divisor(c.stride);
  return p;
}


}  // namespace

void validate(const Conv2d& c) {
  if (c.batch == 0 || c.in_h == 0 || c.in_w == 0 || c.in_c == 0 || c.out_c == 0 || c.kernel == 0 ||
      c.stride == 0)
    throw Error(describe(c) + ": every size, the kernel and the stride must be at least 1");
  // In 64 bits, before Conv2d's own 32-bit arithmetic (out_h(), col_cols()) can wrap.
  const uint64_t padded_h = uint64_t(c.in_h) + 2ull * c.pad, padded_w = uint64_t(c.in_w) + 2ull * c.pad;
  if (padded_h > detail::kMaxIndexedElements || padded_w > detail::kMaxIndexedElements ||
      uint64_t(c.kernel) * c.kernel * c.in_c > detail::kMaxIndexedElements)
    throw Error(describe(c) + ": a padded size or patch of 2^31 or more (the shaders index in 32 bits)");
  if (c.kernel > padded_h || c.kernel > padded_w)
    throw Error(describe(c) + ": the kernel is larger than the padded input");
  if (c.col_elements() > detail::kMaxIndexedElements || c.input_elements() > detail::kMaxIndexedElements ||
      c.output_elements() > detail::kMaxIndexedElements || c.weight_elements() > detail::kMaxIndexedElements)
    throw Error(describe(c) + ": a tensor of 2^31 elements or more (the shaders index in 32 bits)");
}

void im2col(Sequence& seq, Format fmt, const Conv2d& c, BufferView x, BufferView col) {
  validate(c);
  size_t eb = format_bytes(fmt);
  detail::require("im2col", "x", x, c.input_elements(), eb);
  detail::require("im2col", "col", col, c.col_elements(), eb);
  // One thread per (output pixel, ky), each copying a run of kernel * in_c.
  const uint64_t threads = c.col_rows() * c.kernel;
  const shader::ConvPush push = push_for(c, threads);
  auto k = detail::kernel<shader::Im2colShader>(seq, fmt);
  seq.dispatch(k, {x, col}, push, detail::grid_stride_groups(threads), "im2col");
}

void col2im(Sequence& seq, Format fmt, const Conv2d& c, BufferView dcol, BufferView dx) {
  validate(c);
  size_t eb = format_bytes(fmt);
  detail::require("col2im", "dcol", dcol, c.col_elements(), eb);
  detail::require("col2im", "dx", dx, c.input_elements(), eb);
  const shader::ConvPush push = push_for(c, c.input_elements());
  auto k = detail::kernel<shader::Col2imShader>(seq, fmt);
  seq.dispatch(k, {dcol, dx}, push, detail::grid_stride_groups(c.input_elements()), "col2im");
}

void conv2d_forward(Sequence& seq, Format fmt, const Conv2d& c, BufferView x, BufferView w, BufferView b,
                    BufferView col, BufferView y) {
  validate(c);
  size_t eb = format_bytes(fmt);
  detail::require("conv2d_forward", "w", w, c.weight_elements(), eb);
  detail::require("conv2d_forward", "b", b, c.out_c, eb);
  detail::require("conv2d_forward", "y", y, c.output_elements(), eb);
  uint32_t rows = uint32_t(c.col_rows());
  im2col(seq, fmt, c, x, col);
  linear_forward(seq, fmt, col, w, y, rows, c.col_cols(), c.out_c);
  bias_add_forward(seq, fmt, y, b, rows, c.out_c);
}

void conv2d_forward_direct(Sequence& seq, Format fmt, const Conv2d& c, BufferView x, BufferView w, BufferView b,
                           BufferView y) {
  validate(c);
  size_t eb = format_bytes(fmt);
  detail::require("conv2d_forward_direct", "x", x, c.input_elements(), eb);
  detail::require("conv2d_forward_direct", "w", w, c.weight_elements(), eb);
  detail::require("conv2d_forward_direct", "b", b, c.out_c, eb);
  detail::require("conv2d_forward_direct", "y", y, c.output_elements(), eb);
  const shader::ConvDirectPush push{uint32_t(c.output_elements()), c.in_h, c.in_w, c.in_c, c.out_h(), c.out_w(),
                                    c.out_c, c.kernel, c.stride, c.pad, detail::fast_divisor(c.out_c),
                                    detail::fast_divisor(c.out_w()), detail::fast_divisor(c.out_h())};
  auto k = detail::kernel<shader::ConvDirectShader>(seq, fmt);
  seq.dispatch(k, {x, w, b, y}, push, detail::grid_stride_groups(c.output_elements()), "conv_direct");
}

void conv2d_backward(Sequence& seq, Format fmt, const Conv2d& c, BufferView dy, BufferView col, BufferView w,
                     BufferView dw, BufferView db, bool accumulate, BufferView* dcol, BufferView* dx) {
  validate(c);
  if ((dcol == nullptr) != (dx == nullptr))
    throw Error("conv2d_backward: dcol and dx go together (dcol is dx's scratch)");
  size_t eb = format_bytes(fmt);
  detail::require("conv2d_backward", "dy", dy, c.output_elements(), eb);
  detail::require("conv2d_backward", "col", col, c.col_elements(), eb);
  detail::require("conv2d_backward", "dw", dw, c.weight_elements(), eb);
  detail::require("conv2d_backward", "db", db, c.out_c, eb);
  uint32_t rows = uint32_t(c.col_rows());
  linear_backward_weight(seq, fmt, dy, col, dw, rows, c.col_cols(), c.out_c, accumulate);
  bias_add_backward(seq, fmt, dy, db, rows, c.out_c, accumulate);
  if (dx) {
    detail::require("conv2d_backward", "w", w, c.weight_elements(), eb);
    linear_backward_input(seq, fmt, dy, w, *dcol, rows, c.col_cols(), c.out_c);
    col2im(seq, fmt, c, *dcol, *dx);
  }
}

}  // namespace vkamp::ops
