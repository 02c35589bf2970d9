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

// The kernels LayerNorm (centered) and RMSNorm share; beta and dbeta are
// LayerNorm's alone (RMSNorm binds another buffer there, never read or written).
void normalize_forward(Sequence& seq, Format fmt, BufferView x, BufferView gamma, BufferView beta, BufferView y,
                       BufferView mean_rstd, uint32_t rows, uint32_t cols, float eps, bool centered) {
  const char* op = centered ? "layer_norm_forward" : "rms_norm_forward";
  size_t eb = format_bytes(fmt);
  check(op, fmt, x, mean_rstd, rows, cols);
  detail::require(op, centered ? "gamma" : "weight", gamma, cols, eb);
  if (centered) detail::require(op, "beta", beta, cols, eb);
  detail::require(op, "y", y, uint64_t(rows) * cols, eb);
  if (rows == 0) return;
  const shader::LayerNormPush push{rows, cols, eps, centered};
  const detail::RowPlan plan = detail::row_plan(seq.context(), rows, cols, 3);
  auto k = detail::kernel<shader::LayerNormShader>(seq, fmt, {plan.thread});
  seq.dispatch(k, {x, gamma, beta, y, mean_rstd}, push, plan.groups, centered ? "layer_norm" : "rms_norm");
}

void normalize_backward_input(Sequence& seq, Format fmt, BufferView x, BufferView gamma, BufferView mean_rstd,
                              BufferView dy, BufferView dx, uint32_t rows, uint32_t cols, bool accumulate,
                              bool centered) {
  const char* op = centered ? "layer_norm_backward_input" : "rms_norm_backward_input";
  size_t eb = format_bytes(fmt);
  check(op, fmt, x, mean_rstd, rows, cols);
  detail::require(op, centered ? "gamma" : "weight", gamma, cols, eb);
  detail::require(op, "dy", dy, uint64_t(rows) * cols, eb);
  detail::require(op, "dx", dx, uint64_t(rows) * cols, eb);
  if (rows == 0) return;
  const shader::LayerNormGradPush push{rows, cols, accumulate, centered};
  const detail::RowPlan plan = detail::row_plan(seq.context(), rows, cols, 2);
  auto k = detail::kernel<shader::LayerNormGradShader>(seq, fmt, {plan.thread});
  seq.dispatch(k, {x, gamma, mean_rstd, dy, dx}, push, plan.groups, centered ? "layer_norm_grad" : "rms_norm_grad");
}

void normalize_backward_params(Sequence& seq, Format fmt, BufferView x, BufferView mean_rstd, BufferView dy,
                               BufferView dgamma, const BufferView* dbeta, uint32_t rows, uint32_t cols,
                               bool accumulate_gamma, bool accumulate_beta) {
  const char* op = dbeta ? "layer_norm_backward_params" : "rms_norm_backward_weight";
  size_t eb = format_bytes(fmt);
  check(op, fmt, x, mean_rstd, rows, cols);
  detail::require(op, "dy", dy, uint64_t(rows) * cols, eb);
  detail::require(op, dbeta ? "dgamma" : "dweight", dgamma, cols, eb);
  if (dbeta) detail::require(op, "dbeta", *dbeta, cols, eb);
  // Rows in chunks, one partial sum per chunk and column, then the chunks
  // added in order (gemm_reduce): the same bits on every run of a device.
  const uint32_t chunk_rows = detail::column_sum_chunk_rows(seq.context(), rows, cols, kChunkRows);
  uint32_t chunks = std::max(1u, div_up(rows, chunk_rows));
  if (chunks > 65535) throw Error(std::string(op) + ": more than " + std::to_string(65535ull * kChunkRows) + " rows");
  Sequence::ScratchScope scope(seq);
  BufferView pg = seq.scratch(size_t(chunks) * cols * sizeof(float));
  BufferView pb = dbeta ? seq.scratch(size_t(chunks) * cols * sizeof(float)) : pg;
  const shader::LayerNormParamGradPush push{rows, cols, chunk_rows, dbeta != nullptr};
  auto k = detail::kernel<shader::LayerNormParamGradShader>(seq, fmt);
  seq.dispatch(k, {x, mean_rstd, dy, pg, pb}, push, {div_up(cols, 256), chunks},
               dbeta ? "layer_norm_param_grad" : "rms_norm_weight_grad");
  detail::add_partials(seq, fmt, pg, dgamma, cols, chunks, accumulate_gamma, "layer_norm_param_reduce");
  if (dbeta) detail::add_partials(seq, fmt, pb, *dbeta, cols, chunks, accumulate_beta, "layer_norm_param_reduce");
}

}  // namespace

void layer_norm_forward(Sequence& seq, Format fmt, BufferView x, BufferView gamma, BufferView beta,
                        BufferView y, BufferView mean_rstd, uint32_t rows, uint32_t cols, float eps) {
  normalize_forward(seq, fmt, x, gamma, beta, y, mean_rstd, rows, cols, eps, true);
}

void layer_norm_backward_input(Sequence& seq, Format fmt, BufferView x, BufferView gamma, BufferView mean_rstd,
                               BufferView dy, BufferView dx, uint32_t rows, uint32_t cols, bool accumulate) {
  normalize_backward_input(seq, fmt, x, gamma, mean_rstd, dy, dx, rows, cols, accumulate, true);
}

void layer_norm_backward_params(Sequence& seq, Format fmt, BufferView x, BufferView mean_rstd, BufferView dy,
                                BufferView dgamma, BufferView dbeta, uint32_t rows, uint32_t cols,
                                bool accumulate_gamma, bool accumulate_beta) {
  normalize_backward_params(seq, fmt, x, mean_rstd, dy, dgamma, &dbeta, rows, cols, accumulate_gamma,
                            accumulate_beta);
}

void rms_norm_forward(Sequence& seq, Format fmt, BufferView x, BufferView weight, BufferView y, BufferView stats,
                      uint32_t rows, uint32_t cols, float eps) {
  normalize_forward(seq, fmt, x, weight, weight, y, stats, rows, cols, eps, false);
}

void rms_norm_backward_input(Sequence& seq, Format fmt, BufferView x, BufferView weight, BufferView stats,
                             BufferView dy, BufferView dx, uint32_t rows, uint32_t cols, bool accumulate) {
  normalize_backward_input(seq, fmt, x, weight, stats, dy, dx, rows, cols, accumulate, false);
}

void rms_norm_backward_weight(Sequence& seq, Format fmt, BufferView x, BufferView stats, BufferView dy,
                              BufferView dweight, uint32_t rows, uint32_t cols, bool accumulate) {
  normalize_backward_params(seq, fmt, x, stats, dy, dweight, nullptr, rows, cols, accumulate, false);
}

void layer_norm_backward(Sequence& seq, Format fmt, BufferView x, BufferView gamma, BufferView mean_rstd,
                         BufferView dy, BufferView dx, BufferView dgamma, BufferView dbeta, uint32_t rows,
                         uint32_t cols, bool accumulate_params) {
  layer_norm_backward_input(seq, fmt, x, gamma, mean_rstd, dy, dx, rows, cols);
  layer_norm_backward_params(seq, fmt, x, mean_rstd, dy, dgamma, dbeta, rows, cols, accumulate_params,
                             accumulate_params);
}

}  // namespace vkamp::ops
