// The fused path of ops::attention (attention_fused.comp and
// attention_fused_grad.comp): FlashAttention-2's tiles, with only a
// logsumexp per (example, head, query row) kept from forward to backward.
// attention.cpp picks it or the materialized path (attention_fused()).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "vkamp/buffer.hpp"
#include "vkamp/gpu_abi/attention_fused.h"
#include "vkamp/float_formats.hpp"
#include "vkamp/ops/attention.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::ops::detail {

// The largest head size the fused kernels take (each invocation holds up
// to four rows of it in registers).
constexpr uint32_t kFusedMaxHead = 128;

// VKAMP_ATTENTION_TILES as asked: unset, gpu or cpu (the kernels' default
// tiles, the CPU drivers' where `cpu`: unset means the device's type), or
// RxT (`dims`: R rows a workgroup by T positions a tile; `text` as given,
// for messages). Each kernel family checks RxT against its own rules; a
// malformed value is a ConfigError.
struct TilesRequest {
  bool cpu = false;
  std::optional<std::pair<uint32_t, uint32_t>> dims;
  std::string text;
};
TilesRequest tiles_requested(const Context& ctx);

// The push constants both fused families take (attention_fused.h), for
// `queries` rows of output.
shader::AttentionFusedPush fused_push(const AttentionShape& s, uint32_t queries, bool accumulate);

// What both fused families refuse: a head over kFusedMaxHead, and more
// (example, head) pairs than a dispatch has workgroups.
void check_fused_shape(const char* op, const AttentionShape& s);
// On a CPU driver, an invocation of `iterations` loop iterations: lavapipe
// leaves a shader's loops after 65535 in all, silently. `kernels` names
// the family in the message.
void check_cpu_loops(const Context& ctx, const char* op, const AttentionShape& s, uint64_t iterations,
                     const char* kernels);

// Per example, in elements of fmt: one fp32 value per (head, position),
// the logsumexp (kept) or D = dy . y (workspace).
uint64_t attention_fused_row_stats(Format fmt, uint32_t seq, uint32_t heads);

void attention_fused_forward(Sequence& seq, Format fmt, BufferView qkv, BufferView y, BufferView lse,
                             const AttentionShape& s);
void attention_fused_backward(Sequence& seq, Format fmt, BufferView qkv, BufferView y, BufferView lse,
                              BufferView dy, BufferView dqkv, BufferView dsum, const AttentionShape& s,
                              bool accumulate);

// The same path on 16 x 16 fp16 fragments (attention_mma.cpp): tensor
// cores where the context's GEMM runs on them (Context::gemm_mma_build()),
// else the same algorithm emulated. It runs where VKAMP_ATTENTION=mma asks
// for it, the format computes in fp16, and every query row is computed
// (training, not decoding); the calls below take it there.
bool attention_mma_runs(const Context& ctx, Format fmt, const AttentionShape& s);
void attention_mma_forward(Sequence& seq, Format fmt, BufferView qkv, BufferView y, BufferView lse,
                           const AttentionShape& s);
void attention_mma_backward(Sequence& seq, Format fmt, BufferView qkv, BufferView y, BufferView lse, BufferView dy,
                            BufferView dqkv, BufferView dsum, const AttentionShape& s, bool accumulate);

}  // namespace vkamp::ops::detail
