// The fused attention on 16 x 16 fp16 fragments (shaders/attention_mma.comp,
// attention_mma_grad.comp): which runs, the tile plan and the dispatches.
// The ".coopmat" (or ".khr") build multiplies on tensor cores; the plain
// build emulates that step, so lavapipe tests the same algorithm.
#include <algorithm>
#include <string>

#include "attention_defaults.hpp"
#include "attention_fused.hpp"
#include "op_util.hpp"
#include "vkamp/config_error.hpp"
#include "vkamp/context.hpp"
#include "vkamp/error.hpp"
#include "vkamp/gpu_abi/attention_fused.h"

namespace vkamp::ops::detail {

namespace {

// {WARPS, TILE}: warps of 16 rows a workgroup, positions a staged tile (a
// multiple of 16): the device's row of attention_defaults.txt (GPUs 64 x 32,
// four warps; CPU drivers, the emulation, 32 x 16), shrunk until shared
// memory holds it. VKAMP_ATTENTION_TILES=RxT sets R = 16 warps and T (a
// sweep's point). Unmeasured on hardware: check-gpu.sh sweeps them.
struct MmaTiles {
  uint32_t warps, tile;
};

uint32_t padded_head(uint32_t hd) { return (hd + 15) / 16 * 16; }

// The largest of the three kernels' shared memory, in bytes: the shaders'
// HS_SIZE and FS_SIZE macros (fp16 and fp32 values) written out again, and
// under the emulation its accumulators (fragment_emulated.glsl: 256 floats
// each of ACCUMULATORS a warp).
uint64_t shared_bytes(const MmaTiles& t, uint32_t hd, bool emulated) {
  const uint64_t dp = padded_head(hd), hs = dp + 8, ps = t.tile + 8, rows = 16 * t.warps;
  const uint64_t fw = std::max<uint64_t>(t.tile, dp) + 4;
  const uint64_t acc = emulated ? 256 * 4 * t.warps : 0;  // bytes per accumulator of every warp
  const uint64_t forward = 2 * ((rows + 2 * t.tile) * hs + rows * ps) + 4 * (rows * fw + rows) +
                           acc * std::max<uint64_t>(t.tile / 16, dp / 16);
  // The query pass holds one block of dS and 2 + dp / 16 accumulators, the key pass two and 2 + dp / 8.
  const uint64_t keys = 2 * ((2 * rows + 2 * t.tile) * hs + 2 * rows * ps) + 4 * (rows * 36 + 2 * t.tile) +
                        acc * (2 + dp / 8);
  return std::max(forward, keys);
}

// Tensor cores where the context's GEMM runs on them, else the emulation.
bool on_tensor_cores(const Context& ctx) { return ctx.gemm_mma() == GemmMma::coopmat; }
// The shaders' build for that: Context::gemm_mma_build(), or "" (the emulation).
std::string build_of(const Context& ctx) { return on_tensor_cores(ctx) ? ctx.gemm_mma_build() : ""; }

uint32_t lanes_of(const Context& ctx) {
  return on_tensor_cores(ctx) ? ctx.info().subgroup_size : gemm_mma_lanes(ctx);
}

MmaTiles tiles(const Context& ctx, uint32_t hd, uint32_t lanes) {
  const bool emulated = !on_tensor_cores(ctx);
  const uint64_t limit = std::max<uint32_t>(ctx.info().max_shared_memory, 16384);
  const TilesRequest r = tiles_requested(ctx);
  if (r.dims) {
    const auto [rows, tile] = *r.dims;
    const MmaTiles t{rows / 16, tile};
    if (rows % 16 != 0 || tile % 16 != 0 || t.warps * lanes > ctx.info().max_workgroup_invocations)
      throw ConfigError("VKAMP_ATTENTION_TILES=" + r.text + ": VKAMP_ATTENTION=mma takes rows and tiles in multiples of " +
                        "16, at most " + std::to_string(ctx.info().max_workgroup_invocations / lanes * 16) + " rows");
    if (shared_bytes(t, hd, emulated) > limit)
      throw ConfigError("VKAMP_ATTENTION_TILES=" + r.text + ": at head size " + std::to_string(hd) + " the mma kernels take " +
                        std::to_string(shared_bytes(t, hd, emulated)) + " bytes of shared memory; the device has " +
                        std::to_string(limit));
    return t;
  }
  const auto [rows, tile] = attention_defaults(r.cpu, ctx.info().vendor_id).mma_tiles;
  MmaTiles t{std::max(rows / 16, 1u), std::max(tile / 16 * 16, 16u)};
  while (t.warps * lanes > ctx.info().max_workgroup_invocations && t.warps > 1) t.warps /= 2;
  while (t.tile > 16 && shared_bytes(t, hd, emulated) > limit) t.tile /= 2;
  while (t.warps > 1 && shared_bytes(t, hd, emulated) > limit) t.warps /= 2;
  if (shared_bytes(t, hd, emulated) > limit)
    throw Error("attention: the mma kernels need " + std::to_string(shared_bytes(t, hd, emulated)) +
                " bytes of shared memory at head size " + std::to_string(hd) + "; the device has " +
                std::to_string(limit));
  return t;
}

// An emulated key pass (the longest kernel) runs per tile about 4 chunk
// products of (DP / 16) fragments, each 256 / lanes elements of 17 loop
// iterations, and the lanes' output loops; this bounds it from above.
uint64_t loop_iterations(uint32_t seq, uint32_t hd, const MmaTiles& t, uint32_t lanes) {
  const uint64_t dp = padded_head(hd), chunks = t.tile / 16, per_lane = 256 / lanes;
  const uint64_t per_tile = 4 * chunks * (dp / 16) * per_lane * 17 + 16 * dp / lanes * 17 + 4 * t.tile;
  return div_up(seq, t.tile) * per_tile + 4 * dp * per_lane + 1024;
}

struct Plan {
  MmaTiles tiles;
  uint32_t lanes, hd;
};

Plan plan(const Context& ctx, const char* op, const AttentionShape& s) {
  const uint32_t hd = s.channels / s.heads, lanes = lanes_of(ctx);
  check_fused_shape(op, s);
  // Lanes 0-15 of a warp own its 16 rows' softmax statistics.
  if (lanes < 16 || 256 % lanes != 0)
    throw Error(std::string(op) + ": the mma kernels need warps of 16 to 256 lanes dividing 256, not " +
                std::to_string(lanes));
  const MmaTiles t = tiles(ctx, hd, lanes);
  check_cpu_loops(ctx, op, s, loop_iterations(s.seq, hd, t, lanes), "emulated mma kernels");
  return {t, lanes, hd};
}

// Indexed by constant_id (common/attention_mma.glsl).
std::vector<uint32_t> constants(const Plan& p, uint32_t keys) {
  return {p.tiles.warps, p.tiles.tile, p.hd, keys, p.lanes, p.tiles.warps * p.lanes};
}

}  // namespace

bool attention_mma_runs(const Context& ctx, Format fmt, const AttentionShape& s) {
  return attention_path(ctx) == "mma" && fmt == Format::F16 && ctx.variant(fmt) == "fp16" && !s.last_only;
}

void attention_mma_forward(Sequence& seq, Format fmt, BufferView qkv, BufferView y, BufferView lse,
                           const AttentionShape& s) {
  const Plan p = plan(seq.context(), "attention_forward", s);
  seq.dispatch(kernel<shader::AttentionMmaShader>(seq, fmt, constants(p, 0), build_of(seq.context())), {qkv, y, lse},
               fused_push(s, s.seq, false), {div_up(s.seq, 16 * p.tiles.warps), s.batch * s.heads, 1}, "attention_mma");
}

void attention_mma_backward(Sequence& seq, Format fmt, BufferView qkv, BufferView y, BufferView lse, BufferView dy,
                            BufferView dqkv, BufferView dsum, const AttentionShape& s, bool accumulate) {
  const Plan p = plan(seq.context(), "attention_backward", s);
  const Groups groups{div_up(s.seq, 16 * p.tiles.warps), s.batch * s.heads, 1};
  // dq and D first (D is what the key pass reads), then dk and dv.
  for (uint32_t keys : {0u, 1u})
    seq.dispatch(kernel<shader::AttentionMmaGradShader>(seq, fmt, constants(p, keys), build_of(seq.context())),
                 {qkv, y, dy, dqkv, lse, dsum}, fused_push(s, s.seq, accumulate), groups,
                 keys ? "attention_mma_grad_keys" : "attention_mma_grad_queries");
}

}  // namespace vkamp::ops::detail
