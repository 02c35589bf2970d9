// 2-D convolution as im2col + GEMM, in NHWC layout.
//
// NHWC makes a convolution a linear layer over output pixels: with the
// patches of x laid out as col[(n,oy,ox), (ky,kx,c)] and the weights as
// w[oc, (ky,kx,c)], Y = col W^T is already y[n,oy,ox,oc], and the bias is a
// bias over its columns. So forward, dW and dcol reuse the linear layer's
// GEMMs and bias ops; only im2col and its adjoint col2im are new kernels.
#pragma once
#include <cstdint>

#include "vkamp/buffer.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::ops {

struct Conv2d {
  uint32_t batch = 1;
  uint32_t in_h = 1, in_w = 1, in_c = 1;
  uint32_t out_c = 1;
  uint32_t kernel = 1;  // square kernel, kernel x kernel
  uint32_t stride = 1;
  uint32_t pad = 0;  // zero padding on every side

  uint32_t out_h() const { return (in_h + 2 * pad - kernel) / stride + 1; }
  uint32_t out_w() const { return (in_w + 2 * pad - kernel) / stride + 1; }
  uint64_t col_rows() const { return uint64_t(batch) * out_h() * out_w(); }  // output pixels
  uint32_t col_cols() const { return kernel * kernel * in_c; }                  // patch length
  uint64_t weight_elements() const { return uint64_t(out_c) * col_cols(); }
  uint64_t input_elements() const { return uint64_t(batch) * in_h * in_w * in_c; }
  uint64_t output_elements() const { return col_rows() * out_c; }
  uint64_t col_elements() const { return col_rows() * col_cols(); }
};

// Throws vkamp::Error when the shape is empty or the kernel does not fit the
// padded input.
void validate(const Conv2d& c);

// col[(n,oy,ox), (ky,kx,ci)] = x[n, oy*s+ky-p, ox*s+kx-p, ci], 0 outside x.
void im2col(Sequence& seq, Format fmt, const Conv2d& c, BufferView x, BufferView col);
// The adjoint: dx[n,y,x,ci] = sum of the dcol entries im2col copied it to,
// summed in fp32 (a gather per input element: no atomics, deterministic).
void col2im(Sequence& seq, Format fmt, const Conv2d& c, BufferView dcol, BufferView dx);

// y = conv(x, w) + b. col is scratch of c.col_elements() values. Padding
// enters the GEMM as zeros, multiplied like any input: an inf weight meets
// them as 0 * inf = NaN, as it would meet a zero input.
void conv2d_forward(Sequence& seq, Format fmt, const Conv2d& c, BufferView x, BufferView w, BufferView b,
                    BufferView col, BufferView y);
// The same y computed directly, one thread per output (conv_direct.comp),
// without col: kept to compare with im2col + GEMM (vkamp-bench conv). It
// adds the bias in fp32 and rounds once, and skips padding taps instead of
// multiplying zeros (so an inf weight gives inf, not NaN, at the border).
void conv2d_forward_direct(Sequence& seq, Format fmt, const Conv2d& c, BufferView x, BufferView w, BufferView b,
                           BufferView y);
// dw (+)= dY^T col, db (+)= column sums of dY, where col holds im2col(x)
// from the forward pass. When dx is given, also dx = col2im(dY W), using
// dcol (c.col_elements() values) as scratch; dcol and dx come together, and
// w is read only then. dx is overwritten, never accumulated.
void conv2d_backward(Sequence& seq, Format fmt, const Conv2d& c, BufferView dy, BufferView col, BufferView w,
                     BufferView dw, BufferView db, bool accumulate, BufferView* dcol = nullptr,
                     BufferView* dx = nullptr);

}  // namespace vkamp::ops
