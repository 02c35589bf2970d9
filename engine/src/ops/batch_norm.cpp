#include "vkamp/ops/batch_norm.hpp"

#include <algorithm>
#include <string>

#include "vkamp/gpu_abi/batch_norm.h"
#include "vkamp/gpu_abi/batch_norm_commit.h"
#include "vkamp/gpu_abi/batch_norm_grad.h"
#include "vkamp/gpu_abi/batch_norm_grad_sums.h"
#include "vkamp/gpu_abi/batch_norm_merge.h"
#include "vkamp/gpu_abi/batch_norm_param_grad.h"
#include "vkamp/gpu_abi/batch_norm_stats.h"
#include "op_util.hpp"
#include "vkamp/error.hpp"

namespace vkamp::ops {

namespace {

// The most rows per invocation of a chunk pass: few enough for lavapipe's
// 65535-iteration loop limit (batch_norm_stats.comp reads its chunk twice).
// Chunks are shorter where the device calls for it (column_sum_chunk_rows).
constexpr uint32_t kChunkRows = 1024;

// Every device accepts a storage view that starts at a multiple of this
// (the largest minStorageBufferOffsetAlignment Vulkan allows).
constexpr size_t kViewAlign = 256;

// An fp32 operand bound from the aligned offset at or before its start,
// read from element `at`: so that mean and var may be the two halves of one
// stats block, and a micro-batch's stats block may start anywhere in the
// pending buffer, whatever c is.
struct Fp32Operand {
  BufferView view;
  uint32_t at = 0;
};

Fp32Operand fp32_operand(const char* op, const char* operand, BufferView v, uint64_t elements) {
  detail::require(op, operand, v, elements, sizeof(float));
  if (v.offset % sizeof(float) != 0)
    throw Error(std::string(op) + ": " + operand + " starts at byte " + std::to_string(v.offset) +
                ", not a multiple of 4");
  const size_t base = v.offset - v.offset % kViewAlign;
  return {BufferView(*v.buffer, base, v.bytes + (v.offset - base)), uint32_t((v.offset - base) / sizeof(float))};
}

void check_shape(const char* op, uint32_t rows, uint32_t c) {
  if (c == 0) throw Error(std::string(op) + ": c must be at least 1");
  if (rows == 0) throw Error(std::string(op) + ": rows must be at least 1");
  if (uint64_t(rows) * c > 0xFFFFFFFFull)
    throw Error(std::string(op) + ": rows * c = " + std::to_string(uint64_t(rows) * c) + " does not fit 32 bits");
}

// How every pass splits a rows x c matrix (the reductions, and the forward
// and dx alike): one invocation per channel and chunk of rows, channels per
// workgroup a multiple of 32, at most 256 (so narrow layers do not idle
// most of a 256-wide group), a workgroup row (y) per chunk.
struct ColumnPlan {
  uint32_t width = 256, chunk_rows = kChunkRows, chunks = 1;
};

ColumnPlan column_plan(Sequence& seq, const char* op, uint32_t rows, uint32_t c) {
  ColumnPlan plan;
  plan.width = std::min(256u, div_up(c, 32) * 32);
  plan.chunk_rows = detail::column_sum_chunk_rows(seq.context(), rows, c, kChunkRows);
  plan.chunks = std::max(1u, div_up(rows, plan.chunk_rows));
  // batch_norm_merge.comp loops over the chunks twice: 2 x 32767 stays
  // under lavapipe's 65535 iterations.
  if (plan.chunks > 32767)
    throw Error(std::string(op) + ": " + std::to_string(rows) + " rows make more than 32767 chunks of " +
                std::to_string(plan.chunk_rows));
  return plan;
}

}  // namespace

void batch_norm_statistics(Sequence& seq, Format fmt, BufferView x, BufferView stats, uint32_t rows, uint32_t c) {
  const char* op = "batch_norm_statistics";
  check_shape(op, rows, c);
  detail::require(op, "x", x, uint64_t(rows) * c, format_bytes(fmt));
  const Fp32Operand out = fp32_operand(op, "stats", stats, 2ull * c);
  const ColumnPlan plan = column_plan(seq, op, rows, c);
  Sequence::ScratchScope scope(seq);
  BufferView partial = seq.scratch(size_t(plan.chunks) * 2 * c * sizeof(float));
  auto chunk_pass = detail::kernel<shader::BatchNormStatsShader>(seq, fmt, {plan.width});
  seq.dispatch(chunk_pass, {x, partial}, shader::BatchNormStatsPush{rows, c, plan.chunk_rows},
               {div_up(c, plan.width), plan.chunks}, "batch_norm_stats");
  auto merge = seq.context().kernel<shader::BatchNormMergeShader>({0u});
  seq.dispatch(merge, {partial, out.view}, shader::BatchNormMergePush{rows, c, plan.chunk_rows, plan.chunks, out.at},
               {div_up(c, 64)}, "batch_norm_merge");
}

void batch_norm_forward(Sequence& seq, Format fmt, BufferView x, BufferView mean, BufferView var,
                        BufferView weight, BufferView bias, BufferView y, uint32_t rows, uint32_t c, float eps) {
  const char* op = "batch_norm_forward";
  check_shape(op, rows, c);
  const size_t eb = format_bytes(fmt);
  detail::require(op, "x", x, uint64_t(rows) * c, eb);
  detail::require(op, "y", y, uint64_t(rows) * c, eb);
  const Fp32Operand m = fp32_operand(op, "mean", mean, c), v = fp32_operand(op, "var", var, c);
  const Fp32Operand w = fp32_operand(op, "weight", weight, c), b = fp32_operand(op, "bias", bias, c);
  const ColumnPlan plan = column_plan(seq, op, rows, c);
  auto k = detail::kernel<shader::BatchNormShader>(seq, fmt, {plan.width});
  seq.dispatch(k, {x, m.view, v.view, w.view, b.view, y},
               shader::BatchNormPush{rows, c, plan.chunk_rows, m.at, v.at, w.at, b.at, eps},
               {div_up(c, plan.width), plan.chunks}, "batch_norm");
}

void batch_norm_grad_sums(Sequence& seq, Format fmt, BufferView x, BufferView mean, BufferView var, BufferView dy,
                          BufferView sums, uint32_t rows, uint32_t c, float eps) {
  const char* op = "batch_norm_grad_sums";
  check_shape(op, rows, c);
  const size_t eb = format_bytes(fmt);
  detail::require(op, "x", x, uint64_t(rows) * c, eb);
  detail::require(op, "dy", dy, uint64_t(rows) * c, eb);
  const Fp32Operand m = fp32_operand(op, "mean", mean, c), v = fp32_operand(op, "var", var, c);
  const Fp32Operand out = fp32_operand(op, "sums", sums, 2ull * c);
  const ColumnPlan plan = column_plan(seq, op, rows, c);
  Sequence::ScratchScope scope(seq);
  BufferView partial = seq.scratch(size_t(plan.chunks) * 2 * c * sizeof(float));
  auto chunk_pass = detail::kernel<shader::BatchNormGradSumsShader>(seq, fmt, {plan.width});
  seq.dispatch(chunk_pass, {x, m.view, v.view, dy, partial},
               shader::BatchNormGradSumsPush{rows, c, plan.chunk_rows, m.at, v.at, eps},
               {div_up(c, plan.width), plan.chunks}, "batch_norm_grad_sums");
  auto merge = seq.context().kernel<shader::BatchNormMergeShader>({1u});
  seq.dispatch(merge, {partial, out.view}, shader::BatchNormMergePush{rows, c, plan.chunk_rows, plan.chunks, out.at},
               {div_up(c, 64)}, "batch_norm_merge");
}

void batch_norm_param_grads(Sequence& seq, Format fmt, BufferView sums, BufferView dweight, BufferView dbias,
                            uint32_t c, bool accumulate_weight, bool accumulate_bias) {
  const char* op = "batch_norm_param_grads";
  check_shape(op, 1, c);
  const Fp32Operand s = fp32_operand(op, "sums", sums, 2ull * c);
  detail::require(op, "dweight", dweight, c, format_bytes(fmt));
  detail::require(op, "dbias", dbias, c, format_bytes(fmt));
  auto k = detail::kernel<shader::BatchNormParamGradShader>(seq, fmt);
  seq.dispatch(k, {s.view, dweight, dbias},
               shader::BatchNormParamGradPush{c, s.at, accumulate_weight ? 1u : 0u, accumulate_bias ? 1u : 0u},
               {div_up(c, 64)}, "batch_norm_param_grad");
}

void batch_norm_backward_input(Sequence& seq, Format fmt, BufferView x, BufferView mean, BufferView var,
                               BufferView weight, BufferView dy, BufferView sums, BufferView dx, uint32_t rows,
                               uint32_t c, bool accumulate, float eps) {
  const char* op = "batch_norm_backward_input";
  check_shape(op, rows, c);
  const size_t eb = format_bytes(fmt);
  detail::require(op, "x", x, uint64_t(rows) * c, eb);
  detail::require(op, "dy", dy, uint64_t(rows) * c, eb);
  detail::require(op, "dx", dx, uint64_t(rows) * c, eb);
  const Fp32Operand m = fp32_operand(op, "mean", mean, c), v = fp32_operand(op, "var", var, c);
  const Fp32Operand w = fp32_operand(op, "weight", weight, c), s = fp32_operand(op, "sums", sums, 2ull * c);
  const ColumnPlan plan = column_plan(seq, op, rows, c);
  auto k = detail::kernel<shader::BatchNormGradShader>(seq, fmt, {plan.width});
  seq.dispatch(k, {x, m.view, v.view, w.view, dy, s.view, dx},
               shader::BatchNormGradPush{rows, c, plan.chunk_rows, m.at, v.at, w.at, s.at, accumulate ? 1u : 0u, eps},
               {div_up(c, plan.width), plan.chunks}, "batch_norm_grad");
}

void batch_norm_commit(Sequence& seq, Buffer& state, BufferView pending, BufferView running_mean,
                       BufferView running_var, BufferView num_batches_tracked, uint32_t c, uint32_t micro_batches,
                       uint32_t rows_per_micro_batch, float momentum) {
  const char* op = "batch_norm_commit";
  check_shape(op, rows_per_micro_batch, c);
  if (micro_batches == 0) throw Error(std::string(op) + ": micro_batches must be at least 1");
  const Fp32Operand p = fp32_operand(op, "pending", pending, 2ull * c * micro_batches);
  const Fp32Operand m = fp32_operand(op, "running_mean", running_mean, c);
  const Fp32Operand v = fp32_operand(op, "running_var", running_var, c);
  const Fp32Operand t = fp32_operand(op, "num_batches_tracked", num_batches_tracked, 1);
  auto k = seq.context().kernel<shader::BatchNormCommitShader>();
  seq.dispatch(k, {state, p.view, m.view, v.view, t.view},
               shader::BatchNormCommitPush{c, micro_batches, rows_per_micro_batch, momentum, p.at, m.at, v.at, t.at},
               {div_up(c, 64)}, "batch_norm_commit");
}

}  // namespace vkamp::ops
