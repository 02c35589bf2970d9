#include "attention_fused.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "attention_defaults.hpp"
#include "vkamp/gpu_abi/attention_fused.h"
#include "op_util.hpp"
#include "vkamp/config_error.hpp"
#include "vkamp/context.hpp"
#include "vkamp/error.hpp"
#include "vkamp/knobs.hpp"

namespace vkamp::ops::detail {

namespace {

constexpr uint32_t kMaxGroups = 65535;

// Tile sizes, as the shaders' specialization constants {ROWS, TILE, HEAD}:
// the device's row of attention_defaults.txt (GPUs 64 x 32; CPU drivers
// 16 x 16, where a workgroup is a loop over SIMD lanes and each barrier
// costs a switch of coroutines), key tiles halved until the two tiles of
// TILE x HEAD fp32 values and the two per-row statistics fit in shared
// memory. VKAMP_ATTENTION_TILES=gpu|cpu takes the other type's row
// (tests), or RxT sets both (a sweep's point: vkamp-bench attention --tiles).
struct Tiles {
  uint32_t rows, tile;
};
uint64_t shared_bytes(uint32_t tile, uint32_t hd) { return (2 * uint64_t(tile) * hd + 2 * tile) * sizeof(float); }

Tiles tiles(const Context& ctx, uint32_t hd) {
  const uint64_t limit = std::max<uint32_t>(ctx.info().max_shared_memory, 16384);
  const TilesRequest r = tiles_requested(ctx);
  if (r.dims) {
    const auto [rows, tile] = *r.dims;
    if (shared_bytes(tile, hd) > limit)
      throw ConfigError("VKAMP_ATTENTION_TILES=" + r.text + ": tiles of " + std::to_string(tile) + " at head size " +
                        std::to_string(hd) + " take " + std::to_string(shared_bytes(tile, hd)) +
                        " bytes of shared memory; the device has " + std::to_string(limit));
    return {rows, tile};
  }
  const auto [rows, tile] = attention_defaults(r.cpu, ctx.info().vendor_id).fused_tiles;
  Tiles t{rows, tile};
  while (t.tile > 4 && shared_bytes(t.tile, hd) > limit) t.tile /= 2;
  return t;
}

// The loop iterations of the forward's last row, the most of any
// invocation of either kernel (the backward's take fewer per tile): two
// loops over the head per key; per tile the staging loop (tile x hd / rows
// each), two over the tile, the rescale over the head and 8 more; the
// loops over the head before and after. The per-tile 8 is fitted: on
// lavapipe's 16 x 16 tiles, the last rows of 465 positions at a head of 64
// (the old count, 2 hd + 2 per key and per tile, allowed 472) and of 236 at
// a head of 128 were left unwritten, 464 and 235 were right. lavapipe
// unrolls short loops (none at a head of 32 counts), so this overcounts
// there.
uint64_t loop_iterations(uint32_t seq, uint32_t hd, const Tiles& t) {
  const uint64_t staged = div_up(uint64_t(t.tile) * hd, t.rows);
  return uint64_t(seq) * (2 * uint64_t(hd) + 2) + div_up(seq, t.tile) * (staged + 2 * uint64_t(t.tile) + hd + 8) +
         2 * uint64_t(hd) + 3;
}

void check(const Context& ctx, const char* op, const AttentionShape& s) {
  check_fused_shape(op, s);
  const uint32_t hd = s.channels / s.heads;
  check_cpu_loops(ctx, op, s, loop_iterations(s.seq, hd, tiles(ctx, hd)), "fused kernels");
}

}  // namespace

shader::AttentionFusedPush fused_push(const AttentionShape& s, uint32_t queries, bool accumulate) {
  return {s.heads, s.seq, queries, s.channels, 1.0f / std::sqrt(float(s.channels / s.heads)), accumulate ? 1u : 0u};
}

void check_fused_shape(const char* op, const AttentionShape& s) {
  if (s.channels / s.heads > kFusedMaxHead) throw Error(std::string(op) + ": the fused kernels take head sizes up to 128");
  if (uint64_t(s.batch) * s.heads > kMaxGroups)
    throw Error(std::string(op) + ": more than 65535 (example, head) pairs in one dispatch");
}

void check_cpu_loops(const Context& ctx, const char* op, const AttentionShape& s, uint64_t iterations,
                     const char* kernels) {
  if (ctx.info().type == VK_PHYSICAL_DEVICE_TYPE_CPU && iterations >= 65535 && !ctx.plan_only())
    throw Error(std::string(op) + ": a sequence of " + std::to_string(s.seq) + " at head size " +
                std::to_string(s.channels / s.heads) + " runs past a CPU driver's 65535 loop iterations in the " +
                kernels + "; set VKAMP_ATTENTION=materialized");
}

TilesRequest tiles_requested(const Context& ctx) {
  const std::optional<std::string>& v = ctx.paths().attention_tiles;
  if (!v || *v == "gpu" || *v == "cpu") return {v ? *v == "cpu" : ctx.info().type == VK_PHYSICAL_DEVICE_TYPE_CPU, {}, ""};
  const auto dims = parse_dims(*v);
  if (!dims || dims->second > 256 || dims->first > ctx.info().max_workgroup_invocations)
    throw ConfigError("VKAMP_ATTENTION_TILES is gpu, cpu or RxT (rows a workgroup, 1 to " +
                      std::to_string(ctx.info().max_workgroup_invocations) + ", x keys a tile, 1 to 256), not \"" +
                      *v + "\"");
  return {false, dims, *v};
}

uint64_t attention_fused_row_stats(Format fmt, uint32_t seq, uint32_t heads) {
  return uint64_t(heads) * seq * (sizeof(float) / format_bytes(fmt));
}

void attention_fused_forward(Sequence& seq, Format fmt, BufferView qkv, BufferView y, BufferView lse,
                             const AttentionShape& s) {
  if (attention_mma_runs(seq.context(), fmt, s)) return attention_mma_forward(seq, fmt, qkv, y, lse, s);
  check(seq.context(), "attention_forward", s);
  const uint32_t hd = s.channels / s.heads, queries = s.last_only ? 1 : s.seq;
  const Tiles t = tiles(seq.context(), hd);
  seq.dispatch(detail::kernel<shader::AttentionFusedShader>(seq, fmt, {t.rows, t.tile, hd}), {qkv, y, lse},
               fused_push(s, queries, false), {div_up(queries, t.rows), s.batch * s.heads, 1}, "attention_fused");
}

void attention_fused_backward(Sequence& seq, Format fmt, BufferView qkv, BufferView y, BufferView lse,
                              BufferView dy, BufferView dqkv, BufferView dsum, const AttentionShape& s,
                              bool accumulate) {
  if (attention_mma_runs(seq.context(), fmt, s))
    return attention_mma_backward(seq, fmt, qkv, y, lse, dy, dqkv, dsum, s, accumulate);
  check(seq.context(), "attention_backward", s);
  const uint32_t hd = s.channels / s.heads;
  const Tiles t = tiles(seq.context(), hd);
  const auto push = fused_push(s, s.seq, accumulate);
  const Groups groups{div_up(s.seq, t.rows), s.batch * s.heads, 1};
  // dq and D first (D is what the key pass reads), then dk and dv.
  for (uint32_t keys : {0u, 1u})
    seq.dispatch(detail::kernel<shader::AttentionFusedGradShader>(seq, fmt, {t.rows, t.tile, hd, keys}),
                 {qkv, y, dy, dqkv, lse, dsum}, push, groups,
                 keys ? "attention_fused_grad_keys" : "attention_fused_grad_queries");
}

}  // namespace vkamp::ops::detail
