#include "vkamp/ops/attention.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "op_util.hpp"
#include "row_plan.hpp"
#include "vkamp/error.hpp"
#include "vkamp/ops/gemm.hpp"

namespace vkamp::ops {

namespace {

// kept and workspace hold the same four regions: three [batch, heads, seq,
// hd] parts (q, k, v forward; dq, dk, dv backward) and one [batch, heads,
// seq, seq] (P forward; dP, then dS, backward). Each region starts at a
// multiple of 256 bytes, the largest minStorageBufferOffsetAlignment Vulkan
// allows, so it can be bound on its own; the padding is counted per example.
constexpr uint64_t kAlignBytes = 256;

uint64_t per_example(Format fmt, uint32_t seq, uint32_t channels, uint32_t heads) {
  return 3 * uint64_t(seq) * channels + uint64_t(heads) * seq * seq + 3 * kAlignBytes / format_bytes(fmt);
}

struct Layout {
  uint32_t hd = 0, bh = 0;  // head size; products per batched GEMM (batch * heads)
  uint64_t head_n = 0;      // seq * hd: one (example, head) matrix of q, k or v
  uint64_t probs_n = 0;     // seq * seq: one (example, head) matrix of P
  uint64_t part = 0;        // elements from one part to the next (q to k to v)
  size_t eb = 0;            // bytes per element
  // Region p of buf: part p (0, 1, 2), or the probabilities (3).
  BufferView region(BufferView buf, uint32_t p, uint64_t elements) const {
    return BufferView(*buf.buffer, buf.offset + p * part * eb, elements * eb);
  }
  BufferView part_view(BufferView buf, uint32_t p) const { return region(buf, p, bh * head_n); }
  BufferView probs(BufferView buf) const { return region(buf, 3, bh * probs_n); }
};

Layout layout(const char* op, Format fmt, const AttentionShape& s) {
  if (s.seq == 0 || s.channels == 0 || s.heads == 0 || s.channels % s.heads != 0)
    throw Error(std::string(op) + ": seq, channels and heads must be >= 1, channels a multiple of heads");
  Layout l;
  l.eb = format_bytes(fmt);
  l.hd = s.channels / s.heads;
  l.bh = s.batch * s.heads;
  l.head_n = uint64_t(s.seq) * l.hd;
  l.probs_n = uint64_t(s.seq) * s.seq;
  const uint64_t align = kAlignBytes / l.eb;
  l.part = (uint64_t(s.batch) * s.seq * s.channels + align - 1) / align * align;
  // The shaders index with 32 bits.
  if (3 * l.part + uint64_t(s.batch) * s.heads * l.probs_n > UINT32_MAX)
    throw Error(std::string(op) + ": more than 2^32 values");
  return l;
}

// tokens <-> heads (attention_heads.comp): `parts` of [batch, seq, channels]
// side by side in tokens, each its own [batch, heads, seq, hd] region of heads.
void move_heads(Sequence& seq, Format fmt, const AttentionShape& s, const Layout& l, BufferView tokens,
                BufferView heads, uint32_t parts, bool merge, bool accumulate) {
  const uint32_t part_n = s.batch * s.seq * s.channels, count = parts * part_n;
  struct {
    detail::FastDivisor by_part, by_hd, by_seq, by_heads;
    uint32_t part_n, hd, seq, heads, count, channels, parts, part_stride, accumulate;
  } push{detail::fast_divisor(part_n), detail::fast_divisor(l.hd), detail::fast_divisor(s.seq),
         detail::fast_divisor(s.heads), part_n, l.hd, s.seq, s.heads, count, s.channels, parts, uint32_t(l.part),
         accumulate};
  static_assert(sizeof(push) == 68, "attention_heads.comp's push constants");
  Kernel& k = detail::kernel(seq, "attention_heads", fmt, 2, sizeof(push), {merge});
  seq.dispatch(k, {tokens, heads}, push, {std::min(div_up(count, 256), 65535u)},
               merge ? "attention_merge" : "attention_split");
}

// A product over every (example, head): op(A) op(B) with the given per-head strides.
Gemm per_head(const Layout& l, uint32_t m, uint32_t n, uint32_t k, uint64_t sa, uint64_t sb, uint64_t sc) {
  return {.m = m, .n = n, .k = k, .batch = l.bh, .stride_a = sa, .stride_b = sb, .stride_c = sc};
}

}  // namespace

uint64_t attention_kept_elements(Format fmt, uint32_t seq, uint32_t channels, uint32_t heads) {
  return per_example(fmt, seq, channels, heads);
}

uint64_t attention_workspace_elements(Format fmt, uint32_t seq, uint32_t channels, uint32_t heads) {
  return per_example(fmt, seq, channels, heads);
}

void attention_forward(Sequence& seq, Format fmt, BufferView qkv, BufferView y, BufferView kept,
                       const AttentionShape& s) {
  const Layout l = layout("attention_forward", fmt, s);
  const uint64_t tokens = uint64_t(s.batch) * s.seq * s.channels;
  detail::require("attention_forward", "qkv", qkv, 3 * tokens, l.eb);
  detail::require("attention_forward", "y", y, tokens, l.eb);
  detail::require("attention_forward", "kept", kept,
                  s.batch * attention_kept_elements(fmt, s.seq, s.channels, s.heads), l.eb);
  if (s.batch == 0) return;
  const uint32_t t = s.seq, hd = l.hd;
  const BufferView p = l.probs(kept);
  move_heads(seq, fmt, s, l, qkv, kept, 3, /*merge=*/false, false);
  // S = Q K^T / sqrt(hd), scaled in fp32 before it is rounded to the format.
  Gemm scores = per_head(l, t, t, hd, l.head_n, l.head_n, l.probs_n);
  scores.trans_b = true;
  scores.alpha = 1.0f / std::sqrt(float(hd));
  gemm(seq, fmt, scores, l.part_view(kept, 0), l.part_view(kept, 1), p);
  struct { uint32_t rows, seq; } push{l.bh * t, t};
  const detail::RowPlan rows = detail::row_plan(seq.context(), push.rows, t, 3);
  seq.dispatch(detail::kernel(seq, "attention_softmax", fmt, 1, sizeof(push), {rows.thread}), {p}, push,
               rows.groups, "attention_softmax");
  // Y = P V, each position summing only the values it may see.
  BufferView y_heads = seq.scratch(tokens * l.eb);
  Gemm values = per_head(l, t, hd, t, l.probs_n, l.head_n, l.head_n);
  values.k_range = KRange::up_to_row;
  gemm(seq, fmt, values, p, l.part_view(kept, 2), y_heads);
  move_heads(seq, fmt, s, l, y, y_heads, 1, /*merge=*/true, false);
}

void attention_backward(Sequence& seq, Format fmt, BufferView kept, BufferView dy, BufferView dqkv,
                        BufferView workspace, const AttentionShape& s, bool accumulate) {
  const Layout l = layout("attention_backward", fmt, s);
  const uint64_t tokens = uint64_t(s.batch) * s.seq * s.channels;
  detail::require("attention_backward", "kept", kept,
                  s.batch * attention_kept_elements(fmt, s.seq, s.channels, s.heads), l.eb);
  detail::require("attention_backward", "dy", dy, tokens, l.eb);
  detail::require("attention_backward", "dqkv", dqkv, 3 * tokens, l.eb);
  detail::require("attention_backward", "workspace", workspace,
                  s.batch * attention_workspace_elements(fmt, s.seq, s.channels, s.heads), l.eb);
  if (s.batch == 0) return;
  const uint32_t t = s.seq, hd = l.hd;
  const float alpha = 1.0f / std::sqrt(float(hd));
  const BufferView p = l.probs(kept), dp = l.probs(workspace);
  // dY by head goes where dQ will be: dQ is the last product, after dY's last reader.
  const BufferView dy_heads = l.part_view(workspace, 0);
  move_heads(seq, fmt, s, l, dy, workspace, 1, /*merge=*/false, false);
  // dP = dY V^T (the masked entries are computed but never read).
  Gemm dprobs = per_head(l, t, t, hd, l.head_n, l.head_n, l.probs_n);
  dprobs.trans_b = true;
  gemm(seq, fmt, dprobs, dy_heads, l.part_view(kept, 2), dp);
  // dV = P^T dY: value j collects from positions t >= j.
  Gemm dvalues = per_head(l, t, hd, t, l.probs_n, l.head_n, l.head_n);
  dvalues.trans_a = true;
  dvalues.k_range = KRange::from_row;
  gemm(seq, fmt, dvalues, p, dy_heads, l.part_view(workspace, 2));
  struct { uint32_t rows, seq; } push{l.bh * t, t};
  const detail::RowPlan rows = detail::row_plan(seq.context(), push.rows, t, 2);
  seq.dispatch(detail::kernel(seq, "attention_softmax_grad", fmt, 2, sizeof(push), {rows.thread}), {p, dp}, push,
               rows.groups, "attention_softmax_grad");
  // dQ = dS K / sqrt(hd) over keys j <= t; dK = dS^T Q / sqrt(hd) over queries t >= j.
  Gemm dqueries = per_head(l, t, hd, t, l.probs_n, l.head_n, l.head_n);
  dqueries.alpha = alpha;
  dqueries.k_range = KRange::up_to_row;
  gemm(seq, fmt, dqueries, dp, l.part_view(kept, 1), l.part_view(workspace, 0));
  Gemm dkeys = dqueries;
  dkeys.trans_a = true;
  dkeys.k_range = KRange::from_row;
  gemm(seq, fmt, dkeys, dp, l.part_view(kept, 0), l.part_view(workspace, 1));
  move_heads(seq, fmt, s, l, dqkv, workspace, 3, /*merge=*/true, accumulate);
}

}  // namespace vkamp::ops
