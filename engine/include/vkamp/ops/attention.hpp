// Causal multi-head self-attention: nanoGPT's CausalSelfAttention between
// its two Linears (c_attn's output in, c_proj's input out), as PyTorch's
// autocast runs it: batched GEMMs with fp32 accumulation over (example,
// head), the scores scaled by 1/sqrt(hd) in fp32 before they are stored,
// and the softmax and its backward in fp32 with the causal mask applied
// there (masked probabilities are exactly 0).
#pragma once
#include <cstdint>

#include "vkamp/buffer.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::ops {

// qkv: [batch, seq, 3*channels] in the storage format (q | k | v, as
// c_attn's output split(n_embd, dim=2)); head h uses columns
// [h*hd, (h+1)*hd) of each of q, k, v, hd = channels / heads.
// y: [batch, seq, channels], y[b,t,h*hd+e] = sum_j P[b,h,t,j] v[b,j,h*hd+e],
// P = softmax over j <= t of (q_t . k_j) / sqrt(hd), softmax in fp32.
struct AttentionShape {
  uint32_t batch = 0, seq = 0, channels = 0, heads = 1;
  // Decoding with a KV cache: qkv holds the seq positions so far, and only
  // the last one's output is computed (y: [batch, 1, channels]; kept:
  // [batch, heads, 1, seq] probabilities). Forward only.
  bool last_only = false;
};

// Which path runs: fused (attention_fused.comp: FlashAttention-2's tiles,
// the probabilities recomputed in the backward, never stored; or the same
// on tensor-core fragments, attention_mma.comp) for head sizes up to 128,
// else the materialized path (batched GEMMs around attention_softmax.comp,
// the probabilities kept from forward to backward). VKAMP_ATTENTION=fused|
// mma|materialized chooses; unset, the device's row of
// engine/src/ops/attention_defaults.txt does: materialized on every device
// today (measured faster on lavapipe; the only path a GPU has run).
bool attention_fused(const Context& ctx, uint32_t channels, uint32_t heads);

// Scratch sizes PER EXAMPLE (batch = 1) in elements of the storage format
// `fmt` (the caller allocates batch * elements * format_bytes(fmt) bytes).
// The heads are column blocks of the token rows, read and written in place.
// kept: what the forward stores for the backward (fused: an fp32 logsumexp
// per head and position; materialized: the probabilities P).
uint64_t attention_kept_elements(const Context& ctx, Format fmt, uint32_t seq, uint32_t channels, uint32_t heads);
// workspace: the backward's scratch (fused: an fp32 D = dy . y per head and
// position; materialized: dP, then dS).
uint64_t attention_workspace_elements(const Context& ctx, Format fmt, uint32_t seq, uint32_t channels, uint32_t heads);

void attention_forward(Sequence& seq, Format fmt, BufferView qkv, BufferView y, BufferView kept,
                       const AttentionShape& s);

// dqkv = d loss / d qkv from dy (added to dqkv's old values when
// accumulate). Reads qkv (the forward's input), y (its output: the fused
// path's D = dy . y; the materialized path ignores it), `kept` (what the
// forward stored) and dy; may use workspace freely.
void attention_backward(Sequence& seq, Format fmt, BufferView qkv, BufferView y, BufferView kept, BufferView dy,
                        BufferView dqkv, BufferView workspace, const AttentionShape& s, bool accumulate);

}  // namespace vkamp::ops
