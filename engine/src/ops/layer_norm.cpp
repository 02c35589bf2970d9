#include "vkamp/ops/layer_norm.hpp"

#include <algorithm>
#include <string>
#include <tuple>

#include "vkamp/gpu_abi/layer_norm.h"
#include "vkamp/gpu_abi/layer_norm_grad.h"
#include "vkamp/gpu_abi/layer_norm_param_grad.h"
#include "op_util.hpp"
#include "row_plan.hpp"
#include "vkamp/error.hpp"

namespace vkamp::ops {

namespace {

// The most rows per invocation of the parameter gradients' first pass: few
// enough for lavapipe's 65535-iteration loop limit. Chunks are shorter where
// the device or the columns call for it (column_sum_chunk_rows).
constexpr uint32_t kChunkRows = 1024;

void check(const char* op, Format fmt, BufferView x, BufferView mean_rstd, uint32_t rows, uint32_t cols) {
  if (cols == 0) throw Error(std::string(op) + ": cols must be at least 1");
  detail::require(op, "x", x, uint64_t(rows) * cols, format_bytes(fmt));
  detail::require(op, "mean_rstd", mean_rstd, uint64_t(rows) * 2, sizeof(float));
}

}  // namespace

void layer_norm_forward(Sequence& seq, Format fmt, BufferView x, BufferView gamma, BufferView beta,
                        BufferView y, BufferView mean_rstd, uint32_t rows, uint32_t cols, float eps) {
  size_t eb = format_bytes(fmt);
  check("layer_norm_forward", fmt, x, mean_rstd, rows, cols);
  detail::require("layer_norm_forward", "gamma", gamma, cols, eb);
  detail::require("layer_norm_forward", "beta", beta, cols, eb);
  detail::require("layer_norm_forward", "y", y, uint64_t(rows) * cols, eb);
  if (rows == 0) return;
  const shader::LayerNormPush push{rows, cols, eps};
  const detail::RowPlan plan = detail::row_plan(seq.context(), rows, cols, 3);
  auto k = detail::kernel<shader::LayerNormShader>(seq, fmt, {plan.thread});
  seq.dispatch(k, {x, gamma, beta, y, mean_rstd}, push, plan.groups, "layer_norm");
}

void layer_norm_backward_input(Sequence& seq, Format fmt, BufferView x, BufferView gamma, BufferView mean_rstd,
                               BufferView dy, BufferView dx, uint32_t rows, uint32_t cols, bool accumulate) {
  size_t eb = format_bytes(fmt);
  check("layer_norm_backward_input", fmt, x, mean_rstd, rows, cols);
  detail::require("layer_norm_backward_input", "gamma", gamma, cols, eb);
  detail::require("layer_norm_backward_input", "dy", dy, uint64_t(rows) * cols, eb);
  detail::require("layer_norm_backward_input", "dx", dx, uint64_t(rows) * cols, eb);
  if (rows == 0) return;
  const shader::LayerNormGradPush push{rows, cols, accumulate};
  const detail::RowPlan plan = detail::row_plan(seq.context(), rows, cols, 2);
  auto k = detail::kernel<shader::LayerNormGradShader>(seq, fmt, {plan.thread});
  seq.dispatch(k, {x, gamma, mean_rstd, dy, dx}, push, plan.groups, "layer_norm_grad");
}

void layer_norm_backward_params(Sequence& seq, Format fmt, BufferView x, BufferView mean_rstd, BufferView dy,
                                BufferView dgamma, BufferView dbeta, uint32_t rows, uint32_t cols,
                                bool accumulate_gamma, bool accumulate_beta) {
  size_t eb = format_bytes(fmt);
  check("layer_norm_backward_params", fmt, x, mean_rstd, rows, cols);
  detail::require("layer_norm_backward_params", "dy", dy, uint64_t(rows) * cols, eb);
  detail::require("layer_norm_backward_params", "dgamma", dgamma, cols, eb);
  detail::require("layer_norm_backward_params", "dbeta", dbeta, cols, eb);
  // Rows in chunks, one partial sum per chunk and column, then the chunks
  // added in order (gemm_reduce): the same bits on every run of a device.
  const uint32_t chunk_rows = detail::column_sum_chunk_rows(seq.context(), rows, cols, kChunkRows);
  uint32_t chunks = std::max(1u, div_up(rows, chunk_rows));
  if (chunks > 65535)
    throw Error("layer_norm_backward_params: more than " + std::to_string(65535ull * kChunkRows) + " rows");
  Sequence::ScratchScope scope(seq);
  BufferView pg = seq.scratch(size_t(chunks) * cols * sizeof(float));
  BufferView pb = seq.scratch(size_t(chunks) * cols * sizeof(float));
  const shader::LayerNormParamGradPush push{rows, cols, chunk_rows};
  auto k = detail::kernel<shader::LayerNormParamGradShader>(seq, fmt);
  seq.dispatch(k, {x, mean_rstd, dy, pg, pb}, push, {div_up(cols, 256), chunks}, "layer_norm_param_grad");
  detail::add_partials(seq, fmt, pg, dgamma, cols, chunks, accumulate_gamma, "layer_norm_param_reduce");
  detail::add_partials(seq, fmt, pb, dbeta, cols, chunks, accumulate_beta, "layer_norm_param_reduce");
}

void layer_norm_backward(Sequence& seq, Format fmt, BufferView x, BufferView gamma, BufferView mean_rstd,
                         BufferView dy, BufferView dx, BufferView dgamma, BufferView dbeta, uint32_t rows,
                         uint32_t cols, bool accumulate_params) {
  layer_norm_backward_input(seq, fmt, x, gamma, mean_rstd, dy, dx, rows, cols);
  layer_norm_backward_params(seq, fmt, x, mean_rstd, dy, dgamma, dbeta, rows, cols, accumulate_params,
                             accumulate_params);
}

}  // namespace vkamp::ops
