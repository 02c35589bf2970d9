#include "vkamp/ops/concat.hpp"

#include "vkamp/gpu_abi/concat.h"
#include "op_util.hpp"

namespace vkamp::ops {
namespace {

using ColumnCopy = shader::ConcatPush;

void copy_columns(Sequence& seq, Format fmt, const ColumnCopy& c, BufferView src, BufferView dst) {
  size_t eb = format_bytes(fmt);
  detail::require("concat", "source", src, uint64_t(c.rows) * c.src_cols, eb);
  detail::require("concat", "destination", dst, uint64_t(c.rows) * c.dst_cols, eb);
  auto k = detail::kernel<shader::ConcatShader>(seq, fmt);
  seq.dispatch(k, {src, dst}, c, detail::grid_stride_groups(uint64_t(c.rows) * c.width), "concat");
}

uint32_t total_cols(const std::vector<ConcatPart>& parts) {
  uint32_t n = 0;
  for (const ConcatPart& p : parts) n += p.cols;
  return n;
}

}  // namespace

void concat_forward(Sequence& seq, Format fmt, const std::vector<ConcatPart>& x, BufferView y, uint32_t rows) {
  const uint32_t cols = total_cols(x);
  uint32_t offset = 0;
  for (const ConcatPart& p : x) {
    copy_columns(seq, fmt, {rows, p.cols, p.cols, 0, cols, offset, 0}, p.data, y);
    offset += p.cols;
  }
}

void concat_backward(Sequence& seq, Format fmt, BufferView dy, const std::vector<ConcatPart>& dx, uint32_t rows) {
  const uint32_t cols = total_cols(dx);
  uint32_t offset = 0;
  for (const ConcatPart& p : dx) {
    if (!p.skip) copy_columns(seq, fmt, {rows, p.cols, cols, offset, p.cols, 0, p.accumulate}, dy, p.data);
    offset += p.cols;
  }
}

}  // namespace vkamp::ops
