#include "vkamp/ops/bias.hpp"

#include <algorithm>

#include "vkamp/gpu_abi/bias_add.h"
#include "vkamp/gpu_abi/bias_grad.h"
#include "op_util.hpp"

namespace vkamp::ops {

void bias_add_forward(Sequence& seq, Format fmt, BufferView y, BufferView b, uint32_t rows, uint32_t cols) {
  size_t eb = format_bytes(fmt);
  uint32_t n = rows * cols;
  detail::require("bias_add_forward", "y", y, n, eb);
  detail::require("bias_add_forward", "bias", b, cols, eb);
  const shader::BiasAddPush push{n, cols};
  auto k = detail::kernel<shader::BiasAddShader>(seq, fmt);
  seq.dispatch(k, {y, b}, push, detail::grid_stride_groups(n), "bias_add");
}

// The most rows per chunk: below llvmpipe's 65,535 loop iterations
// (bias_grad.comp). The chunks are shorter where the device or the columns
// call for it (column_sum_chunk_rows).
constexpr uint32_t kBiasChunkRows = 32768;

void bias_add_backward(Sequence& seq, Format fmt, BufferView dy, BufferView db, uint32_t rows,
                       uint32_t cols, bool accumulate) {
  size_t eb = format_bytes(fmt);
  detail::require("bias_add_backward", "dy", dy, uint64_t(rows) * cols, eb);
  detail::require("bias_add_backward", "db", db, cols, eb);
  const uint32_t chunk_rows = detail::column_sum_chunk_rows(seq.context(), rows, cols, kBiasChunkRows);
  const uint32_t chunks = std::max(1u, div_up(rows, chunk_rows));
  const shader::BiasGradPush push{rows, cols, accumulate, chunk_rows};
  const uint32_t partials = chunks > 1 ? 1 : 0;
  Sequence::ScratchScope scope(seq);
  BufferView partial = partials ? seq.scratch(size_t(chunks) * cols * sizeof(float)) : db;
  auto k = detail::kernel<shader::BiasGradShader>(seq, fmt, {partials});
  seq.dispatch(k, {dy, db, partial}, push, {div_up(cols, 256), chunks}, "bias_grad");
  if (partials) detail::add_partials(seq, fmt, partial, db, cols, chunks, accumulate, "bias_grad_reduce");
}

}  // namespace vkamp::ops
