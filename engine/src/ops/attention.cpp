#include "vkamp/ops/attention.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "attention_defaults.hpp"
#include "attention_fused.hpp"
#include "vkamp/gpu_abi/attention_softmax.h"
#include "op_util.hpp"
#include "row_plan.hpp"
#include "vkamp/context.hpp"
#include "vkamp/error.hpp"
#include "vkamp/ops/gemm.hpp"

namespace vkamp::ops {

namespace {

// Each head reads and writes its own hd columns of the token rows in
// place: q, k and v are column blocks of qkv ([batch, seq, 3 channels]),
// y's and dqkv's heads column blocks of theirs, so no copy regroups them by
// head. Only the probabilities have their own layout, [batch, heads, seq,
// seq], kept from forward to backward (and dP in the workspace).
uint64_t probs_per_example(uint32_t seq, uint32_t heads) { return uint64_t(heads) * seq * seq; }

struct Layout {
  uint32_t hd = 0, bh = 0;   // head size; products per batched GEMM (batch * heads)
  uint32_t heads = 0, channels = 0;
  uint64_t token_rows = 0;   // seq: one example's rows
  uint64_t probs_n = 0;      // seq * seq: one (example, head) matrix of P
  size_t eb = 0;             // bytes per element
};

Layout layout(const char* op, Format fmt, const AttentionShape& s) {
  if (s.seq == 0 || s.channels == 0 || s.heads == 0 || s.channels % s.heads != 0)
    throw Error(std::string(op) + ": seq, channels and heads must be >= 1, channels a multiple of heads");
  Layout l;
  l.eb = format_bytes(fmt);
  l.hd = s.channels / s.heads;
  l.bh = s.batch * s.heads;
  l.heads = s.heads;
  l.channels = s.channels;
  l.token_rows = s.seq;
  l.probs_n = uint64_t(s.seq) * s.seq;
  // The shaders index with 32 bits.
  if (3 * uint64_t(s.batch) * s.seq * s.channels > UINT32_MAX || uint64_t(s.batch) * probs_per_example(s.seq, s.heads) > UINT32_MAX)
    throw Error(std::string(op) + ": more than 2^32 values");
  return l;
}

// Where operand `part` (0 q, 1 k, 2 v of a row of `parts` blocks of
// channels; parts = 1 for y and dy) of each (example, head) product lies.
struct HeadColumns {
  uint64_t first, stride, outer_stride;
  uint32_t ld;
};
HeadColumns head_columns(const Layout& l, uint32_t parts, uint32_t part) {
  const uint32_t row = parts * l.channels;
  return {uint64_t(part) * l.channels, l.hd, l.token_rows * row, row};
}

// A product over every (example, head), seq x seq or seq x hd; the
// operands that are token rows get their head's columns.
Gemm per_head(const Layout& l, uint32_t m, uint32_t n, uint32_t k) {
  return {.m = m, .n = n, .k = k, .batch = l.bh, .inner = l.heads};
}
void set_a(Gemm& g, const HeadColumns& h) {
  g.first_a = h.first, g.stride_a = h.stride, g.outer_stride_a = h.outer_stride, g.lda = h.ld;
}
void set_b(Gemm& g, const HeadColumns& h) {
  g.first_b = h.first, g.stride_b = h.stride, g.outer_stride_b = h.outer_stride, g.ldb = h.ld;
}
void set_c(Gemm& g, const HeadColumns& h) {
  g.first_c = h.first, g.stride_c = h.stride, g.outer_stride_c = h.outer_stride, g.ldc = h.ld;
}

}  // namespace

bool attention_fused(const Context& ctx, uint32_t channels, uint32_t heads) {
  return heads != 0 && channels / heads <= detail::kFusedMaxHead && detail::attention_path(ctx) != "materialized";
}

uint64_t attention_kept_elements(const Context& ctx, Format fmt, uint32_t seq, uint32_t channels, uint32_t heads) {
  if (attention_fused(ctx, channels, heads)) return detail::attention_fused_row_stats(fmt, seq, heads);
  return probs_per_example(seq, heads);
}

uint64_t attention_workspace_elements(const Context& ctx, Format fmt, uint32_t seq, uint32_t channels,
                                      uint32_t heads) {
  if (attention_fused(ctx, channels, heads)) return detail::attention_fused_row_stats(fmt, seq, heads);
  return probs_per_example(seq, heads);
}

void attention_forward(Sequence& seq, Format fmt, BufferView qkv, BufferView y, BufferView kept,
                       const AttentionShape& s) {
  const Layout l = layout("attention_forward", fmt, s);
  if (attention_fused(seq.context(), s.channels, s.heads)) {
    const uint32_t queries = s.last_only ? 1 : s.seq;
    detail::require("attention_forward", "qkv", qkv, 3 * uint64_t(s.batch) * s.seq * s.channels, l.eb);
    detail::require("attention_forward", "y", y, uint64_t(s.batch) * queries * s.channels, l.eb);
    detail::require("attention_forward", "kept", kept, uint64_t(l.bh) * queries, sizeof(float));
    if (s.batch != 0) detail::attention_fused_forward(seq, fmt, qkv, y, kept, s);
    return;
  }
  const uint32_t t = s.seq, hd = l.hd;
  // Decoding: the last position's query over every cached key and value.
  const uint32_t queries = s.last_only ? 1 : t;
  detail::require("attention_forward", "qkv", qkv, 3 * uint64_t(s.batch) * t * s.channels, l.eb);
  detail::require("attention_forward", "y", y, uint64_t(s.batch) * queries * s.channels, l.eb);
  detail::require("attention_forward", "kept", kept, uint64_t(l.bh) * queries * t, l.eb);
  if (s.batch == 0) return;
  const BufferView p = kept;
  // S = Q K^T / sqrt(hd), scaled in fp32 before it is rounded to the format.
  Gemm scores = per_head(l, queries, t, hd);
  scores.trans_b = true;
  scores.alpha = 1.0f / std::sqrt(float(hd));
  set_a(scores, head_columns(l, 3, 0));
  scores.first_a += uint64_t(t - queries) * 3 * l.channels;  // the query rows
  set_b(scores, head_columns(l, 3, 1));
  gemm(seq, fmt, scores, qkv, qkv, p);
  const shader::AttentionSoftmaxPush push{l.bh * queries, t, queries};
  const detail::RowPlan rows = detail::row_plan(seq.context(), push.rows, t, 3);
  seq.dispatch(detail::kernel<shader::AttentionSoftmaxShader>(seq, fmt, {rows.thread}), {p}, push, rows.groups,
               "attention_softmax");
  // Y = P V, each position summing only the values it may see (the last
  // one sees them all).
  Gemm values = per_head(l, queries, hd, t);
  values.k_range = s.last_only ? KRange::all : KRange::up_to_row;
  set_b(values, head_columns(l, 3, 2));
  HeadColumns y_heads = head_columns(l, 1, 0);
  y_heads.outer_stride = uint64_t(queries) * l.channels;
  set_c(values, y_heads);
  gemm(seq, fmt, values, p, qkv, y);
}

void attention_backward(Sequence& seq, Format fmt, BufferView qkv, BufferView y, BufferView kept, BufferView dy,
                        BufferView dqkv, BufferView workspace, const AttentionShape& s, bool accumulate) {
  if (s.last_only) throw Error("attention_backward: a decoding shape (last_only) has no backward");
  const Layout l = layout("attention_backward", fmt, s);
  const uint64_t tokens = uint64_t(s.batch) * s.seq * s.channels;
  if (attention_fused(seq.context(), s.channels, s.heads)) {
    detail::require("attention_backward", "qkv", qkv, 3 * tokens, l.eb);
    detail::require("attention_backward", "y", y, tokens, l.eb);
    detail::require("attention_backward", "kept", kept, uint64_t(l.bh) * s.seq, sizeof(float));
    detail::require("attention_backward", "dy", dy, tokens, l.eb);
    detail::require("attention_backward", "dqkv", dqkv, 3 * tokens, l.eb);
    detail::require("attention_backward", "workspace", workspace, uint64_t(l.bh) * s.seq, sizeof(float));
    if (s.batch != 0)
      detail::attention_fused_backward(seq, fmt, qkv, y, kept, dy, dqkv, workspace, s, accumulate);
    return;
  }
  detail::require("attention_backward", "qkv", qkv, 3 * tokens, l.eb);
  detail::require("attention_backward", "kept", kept, s.batch * probs_per_example(s.seq, s.heads), l.eb);
  detail::require("attention_backward", "dy", dy, tokens, l.eb);
  detail::require("attention_backward", "dqkv", dqkv, 3 * tokens, l.eb);
  detail::require("attention_backward", "workspace", workspace, s.batch * probs_per_example(s.seq, s.heads), l.eb);
  if (s.batch == 0) return;
  const uint32_t t = s.seq, hd = l.hd;
  const float alpha = 1.0f / std::sqrt(float(hd));
  const BufferView p = kept, dp = workspace;
  // dP = dY V^T (the masked entries are computed but never read).
  Gemm dprobs = per_head(l, t, t, hd);
  dprobs.trans_b = true;
  set_a(dprobs, head_columns(l, 1, 0));
  set_b(dprobs, head_columns(l, 3, 2));
  gemm(seq, fmt, dprobs, dy, qkv, dp);
  // dV = P^T dY: value j collects from positions t >= j.
  Gemm dvalues = per_head(l, t, hd, t);
  dvalues.trans_a = true;
  dvalues.k_range = KRange::from_row;
  dvalues.accumulate = accumulate;
  set_b(dvalues, head_columns(l, 1, 0));
  set_c(dvalues, head_columns(l, 3, 2));
  gemm(seq, fmt, dvalues, p, dy, dqkv);
  const shader::AttentionSoftmaxPush push{l.bh * t, t, t};
  const detail::RowPlan rows = detail::row_plan(seq.context(), push.rows, t, 2);
  seq.dispatch(detail::kernel<shader::AttentionSoftmaxGradShader>(seq, fmt, {rows.thread}), {p, dp}, push,
               rows.groups, "attention_softmax_grad");
  // dQ = dS K / sqrt(hd) over keys j <= t; dK = dS^T Q / sqrt(hd) over queries t >= j.
  Gemm dqueries = per_head(l, t, hd, t);
  dqueries.alpha = alpha;
  dqueries.k_range = KRange::up_to_row;
  dqueries.accumulate = accumulate;
  set_b(dqueries, head_columns(l, 3, 1));
  set_c(dqueries, head_columns(l, 3, 0));
  gemm(seq, fmt, dqueries, dp, qkv, dqkv);
  Gemm dkeys = dqueries;
  dkeys.trans_a = true;
  dkeys.k_range = KRange::from_row;
  set_b(dkeys, head_columns(l, 3, 0));
  set_c(dkeys, head_columns(l, 3, 1));
  gemm(seq, fmt, dkeys, dp, qkv, dqkv);
}

}  // namespace vkamp::ops
