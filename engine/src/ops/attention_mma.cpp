// The fused attention on 16 x 16 fp16 fragments (shaders/attention_mma.comp,
// attention_mma_grad.comp): which runs, the tile plan and the dispatches.
// The ".coopmat" (or ".khr") build multiplies on tensor cores; the plain
// build emulates that step, so lavapipe tests the same algorithm.
#include <algorithm>
#include <cmath>
#include <string>

#include "attention_defaults.hpp"
#include "attention_fused.hpp"
#include "op_util.hpp"
#include "vkamp/config_error.hpp"
#include "vkamp/context.hpp"
#include "vkamp/error.hpp"
#include "vkamp/gpu_abi/attention_fused.h"
#include "vkamp/knobs.hpp"

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

uint32_t lanes_of(const Context& ctx) {
  return ctx.gemm_mma() == GemmMma::coopmat ? ctx.info().subgroup_size : gemm_mma_lanes(ctx);
}

MmaTiles tiles(const Context& ctx, uint32_t hd, uint32_t lanes) {
  const bool emulated = ctx.gemm_mma() != GemmMma::coopmat;
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

// lavapipe leaves a shader's loops after 65535 iterations in all, silently.
// An emulated key pass (the longest kernel) runs per tile about 4 chunk
// products of (DP / 16) fragments, each 256 / lanes elements of 17
// iterations, and the lanes' output loops; this bounds it from above.
constexpr uint64_t kCpuLoopLimit = 65535;
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
  if (hd > kFusedMaxHead) throw Error(std::string(op) + ": the fused kernels take head sizes up to 128");
  // Lanes 0-15 of a warp own its 16 rows' softmax statistics.
  if (lanes < 16 || 256 % lanes != 0)
    throw Error(std::string(op) + ": the mma kernels need warps of 16 to 256 lanes dividing 256, not " +
                std::to_string(lanes));
  const MmaTiles t = tiles(ctx, hd, lanes);
  if (ctx.info().type == VK_PHYSICAL_DEVICE_TYPE_CPU && loop_iterations(s.seq, hd, t, lanes) >= kCpuLoopLimit)
    throw Error(std::string(op) + ": a sequence of " + std::to_string(s.seq) + " at head size " + std::to_string(hd) +
                " runs past a CPU driver's 65535 loop iterations in the emulated mma kernels; set "
                "VKAMP_ATTENTION=materialized");
  if (uint64_t(s.batch) * s.heads > 65535)
    throw Error(std::string(op) + ": more than 65535 (example, head) pairs in one dispatch");
  return {t, lanes, hd};
}

// Indexed by constant_id (common/attention_mma.glsl).
std::vector<uint32_t> constants(const Plan& p, uint32_t keys) {
  return {p.tiles.warps, p.tiles.tile, p.hd, keys, p.lanes, p.tiles.warps * p.lanes};
}

shader::AttentionFusedPush push_of(const AttentionShape& s, bool accumulate) {
  return {s.heads, s.seq, s.seq, s.channels, 1.0f / std::sqrt(float(s.channels / s.heads)), accumulate ? 1u : 0u};
}

}  // namespace

bool attention_mma_runs(const Context& ctx, Format fmt, const AttentionShape& s) {
  // Asked for, or the device's default where the GEMM has tensor cores (the
  // emulation is for tests: never a default).
  const bool cpu = ctx.info().type == VK_PHYSICAL_DEVICE_TYPE_CPU;
  const bool asked = env_text("VKAMP_ATTENTION")
                         ? env_choice("VKAMP_ATTENTION") == "mma"
                         : attention_defaults(cpu, ctx.info().vendor_id).path == "mma" &&
                               ctx.gemm_mma() == GemmMma::coopmat;
  return asked && fmt == Format::F16 && ctx.variant(fmt) == "fp16" && !s.last_only;
}

void attention_mma_forward(Sequence& seq, Format fmt, BufferView qkv, BufferView y, BufferView lse,
                           const AttentionShape& s) {
  const Plan p = plan(seq.context(), "attention_forward", s);
  const std::string build = seq.context().gemm_mma() == GemmMma::coopmat ? seq.context().gemm_mma_build() : "";
  seq.dispatch(kernel<shader::AttentionMmaShader>(seq, fmt, constants(p, 0), build), {qkv, y, lse},
               push_of(s, false), {div_up(s.seq, 16 * p.tiles.warps), s.batch * s.heads, 1}, "attention_mma");
}

void attention_mma_backward(Sequence& seq, Format fmt, BufferView qkv, BufferView y, BufferView lse, BufferView dy,
                            BufferView dqkv, BufferView dsum, const AttentionShape& s, bool accumulate) {
  const Plan p = plan(seq.context(), "attention_backward", s);
  const std::string build = seq.context().gemm_mma() == GemmMma::coopmat ? seq.context().gemm_mma_build() : "";
  const Groups groups{div_up(s.seq, 16 * p.tiles.warps), s.batch * s.heads, 1};
  // dq and D first (D is what the key pass reads), then dk and dv.
  for (uint32_t keys : {0u, 1u})
    seq.dispatch(kernel<shader::AttentionMmaGradShader>(seq, fmt, constants(p, keys), build),
                 {qkv, y, dy, dqkv, lse, dsum}, push_of(s, accumulate), groups,
                 keys ? "attention_mma_grad_keys" : "attention_mma_grad_queries");
}

}  // namespace vkamp::ops::detail
