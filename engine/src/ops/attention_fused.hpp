// The fused path of ops::attention (attention_fused.comp and
// attention_fused_grad.comp): FlashAttention-2's tiles, with only a
// logsumexp per (example, head, query row) kept from forward to backward.
// attention.cpp picks it or the materialized path (attention_fused()).
#pragma once
#include <cstdint>

#include "vkamp/buffer.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/ops/attention.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::ops::detail {

// The largest head size the fused kernels take (each invocation holds up
// to four rows of it in registers).
constexpr uint32_t kFusedMaxHead = 128;

// Per example, in elements of fmt: one fp32 value per (head, position),
// the logsumexp (kept) or D = dy . y (workspace).
uint64_t attention_fused_row_stats(Format fmt, uint32_t seq, uint32_t heads);

void attention_fused_forward(Sequence& seq, Format fmt, BufferView qkv, BufferView y, BufferView lse,
                             const AttentionShape& s);
void attention_fused_backward(Sequence& seq, Format fmt, BufferView qkv, BufferView y, BufferView lse,
                              BufferView dy, BufferView dqkv, BufferView dsum, const AttentionShape& s,
                              bool accumulate);

}  // namespace vkamp::ops::detail
