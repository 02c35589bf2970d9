#include "vkamp/ops/gemm.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "op_util.hpp"
#include "vkamp/error.hpp"

namespace vkamp::ops {
namespace {

uint32_t pow2_at_least(uint32_t v) {
  uint32_t p = 1;
  while (p < v) p *= 2;
  return p;
}

// Workgroups a product should have before its k is split: enough for every
// core of a CPU driver and every multiprocessor of a large GPU.
constexpr uint32_t kBusyGroups = 128;
// The shortest k slice worth a workgroup (and its share of the reduction).
constexpr uint32_t kMinSliceK = 256;
// Fewer tiles than this in all, and the tiles shrink along m: 2 workgroups
// on a 2-core CPU leave nothing to balance.
constexpr uint32_t kMinGroups = 8;
// Both sides of C at least this long, and the direct path takes 16 x 8 blocks.
constexpr uint32_t kBigBlockMin = 64;

}  // namespace

GemmPlan gemm_plan(const Gemm& g, bool tiled) {
  GemmPlan plan;
  // The direct path (CPU drivers) gives each thread 16 x 8 outputs where C
  // has room for them: lavapipe pays per lane for every load, and a 16 x 8
  // block loads 24 values per 128 fmas where 4 x 4 loads 8 per 16. Measured
  // on lavapipe (2 cores), fp32, 512^3: 16 x 8 about 1.2x 8 x 8, 8 x 8 about
  // 1.7x 4 x 4; 8 x 16 and 16 x 16 no better than 16 x 8.
  // Thin outputs keep 4 x 4, which pads them less.
  // VKAMP_GEMM_BLOCK=RxC (e.g. 4x4, 16x8) forces a block, for tests and benchmarks.
  if (!tiled) {
    if (g.m >= kBigBlockMin && g.n >= kBigBlockMin) plan.bm = 16, plan.bn = 8;
    if (const char* e = std::getenv("VKAMP_GEMM_BLOCK")) {
      unsigned r = 0, c = 0;
      if (std::sscanf(e, "%ux%u", &r, &c) == 2 && r >= 1 && c >= 1 && r <= 16 && c <= 16)
        plan.bm = r, plan.bn = c;
    }
  }
  // As many threads along n as n needs, up to 16 (a 64-wide tile), so a
  // 6-channel output computes 8 columns, not 64.
  plan.wx = std::min(16u, pow2_at_least(div_up(std::max(g.n, 1u), plan.bn)));
  plan.wy = std::min(256 / plan.wx, pow2_at_least(div_up(std::max(g.m, 1u), plan.bm)));
  // Shared-memory tiles of at most 64 rows stay within Vulkan's guaranteed
  // 16 KiB of shared memory (gemm.comp stages 16 x (tile + 1) floats of each).
  if (tiled) plan.wy = std::min(plan.wy, 16u);
  // Workgroups in all, over every product of a batch.
  auto tiles = [&] { return uint64_t(div_up(g.m, plan.tile_m())) * div_up(g.n, plan.tile_n()) * g.batch; };
  while (plan.wy > 1 && plan.wx * plan.wy > 32 && tiles() < kMinGroups) plan.wy /= 2;
  const uint64_t groups = tiles();
  if (g.batch == 1 && groups > 0 && groups < kBusyGroups && g.k >= 2 * kMinSliceK) {
    uint32_t splits = uint32_t(std::min<uint64_t>(div_up(kBusyGroups, groups), g.k / kMinSliceK));
    plan.k_chunk = div_up(g.k, splits);
    plan.splits = div_up(g.k, plan.k_chunk);  // no empty slice
  }
  return plan;
}

namespace {

// Elements of an operand of `size` elements per product in a batch at
// `stride` (0: dense), checked to fit the shader's 32-bit indices.
uint64_t batched_extent(const char* operand, uint32_t batch, uint64_t& stride, uint64_t size) {
  if (stride == 0) stride = size;
  uint64_t extent = batch == 0 ? 0 : (batch - 1) * stride + size;
  if (extent > UINT32_MAX)
    throw Error(std::string("gemm: ") + operand + " spans " + std::to_string(extent) +
                " elements, more than 32-bit indices reach");
  return extent;
}

}  // namespace

void gemm(Sequence& seq, Format fmt, const Gemm& g, BufferView a, BufferView b, BufferView c,
          const GemmEpilogue& epilogue) {
  size_t eb = format_bytes(fmt);
  uint64_t sa = g.stride_a, sb = g.stride_b, sc = g.stride_c;
  detail::require("gemm", "A", a, batched_extent("A", g.batch, sa, uint64_t(g.m) * g.k), eb);
  detail::require("gemm", "B", b, batched_extent("B", g.batch, sb, uint64_t(g.k) * g.n), eb);
  detail::require("gemm", "C", c, batched_extent("C", g.batch, sc, uint64_t(g.m) * g.n), eb);
  const bool fused = !epilogue.empty();
  if (fused && g.accumulate) throw Error("gemm: an epilogue (bias, activation) cannot accumulate into C");
  if (fused && g.batch != 1) throw Error("gemm: an epilogue (bias, activation) needs a single product");
  if (epilogue.preact && !epilogue.act) throw Error("gemm: a pre-activation output needs an activation");
  if (epilogue.bias) detail::require("gemm", "bias", *epilogue.bias, g.n, eb);
  if (epilogue.preact) detail::require("gemm", "preact", *epilogue.preact, uint64_t(g.m) * g.n, eb);
  if (g.batch == 0) return;
  // Shared-memory tiles on GPUs, direct loads on CPU drivers (gemm.comp);
  // VKAMP_GEMM_TILED=0/1 overrides, for benchmarks.
  bool tiled = seq.context().info().type != VK_PHYSICAL_DEVICE_TYPE_CPU;
  if (const char* e = std::getenv("VKAMP_GEMM_TILED")) tiled = e[0] == '1';
  // A split product runs its epilogue in the reduction (gemm_reduce.comp),
  // so fusing keeps the split's parallelism: fashion_mlp's first layer
  // (128 x 256 over k = 784, 8 tiles) took about 1.6x the GEMM time per
  // step on lavapipe when fusion forced it unsplit.
  const GemmPlan plan = gemm_plan(g, tiled);
  const bool split = plan.splits > 1;
  // 16-row blocks on a driver with subgroups of 8 (lavapipe on AVX2/AVX-512):
  // the 8 lanes along x share their 16 A values, so each loads 2 and
  // broadcasts them (gemm.comp SG_A). VKAMP_GEMM_SG=0 turns that off.
  const auto& info = seq.context().info();
  const char* sge = std::getenv("VKAMP_GEMM_SG");
  const bool sg_a = !tiled && plan.bm == 16 && plan.wx % 8 == 0 && info.subgroup_size == 8 &&
                    (info.subgroup_ops & VK_SUBGROUP_FEATURE_BALLOT_BIT) && !(sge && sge[0] == '0');
  const bool batched = g.batch > 1;
  struct {
    uint32_t m, n, k;
    float alpha;
    uint32_t accumulate, kc, sa, sb, sc, z0, keep_z;
  } push{g.m, g.n, g.k, g.alpha, g.accumulate, plan.k_chunk, uint32_t(sa), uint32_t(sb), uint32_t(sc), 0,
         epilogue.preact.has_value()};
  // Activation codes are gemm.comp's ACT (shaders/common/activation_fn.glsl;
  // 0 none). A split product leaves its epilogue to the reduction, and
  // shares the plain product's pipeline.
  const uint32_t act = epilogue.act && !split ? uint32_t(*epilogue.act) : 0;
  const bool bias_here = epilogue.bias && !split;
  Kernel& kern = detail::kernel(seq, "gemm", fmt, 6, sizeof(push),
                                {g.trans_a, g.trans_b, tiled, plan.wx, plan.wy, split, plan.bm, plan.bn, sg_a,
                                 batched, uint32_t(g.k_range), bias_here, act},
                                sg_a ? ".subgroup" : "");
  // Bindings the shader does not touch (no bias, no z, no split) hold C.
  const BufferView bias = epilogue.bias.value_or(c), preact = epilogue.preact.value_or(c);
  Groups groups{div_up(g.n, plan.tile_n()), div_up(g.m, plan.tile_m()), plan.splits};
  if (!split) {
    // Binding 3 (the partials) is never touched without SPLIT_K; C fills the slot.
    // A batch goes along z, at most 65535 products (the guaranteed
    // maxComputeWorkGroupCount) per dispatch.
    for (uint32_t z0 = 0; z0 < g.batch; z0 += 65535) {
      push.z0 = z0;
      groups.z = std::min(g.batch - z0, 65535u);
      seq.dispatch(kern, {a, b, c, c, bias, preact}, push, groups, "gemm");
    }
    return;
  }
  uint64_t count = uint64_t(g.m) * g.n;
  BufferView partial = seq.scratch(count * plan.splits * sizeof(float));
  seq.dispatch(kern, {a, b, c, partial, c, c}, push, groups, "gemm");
  detail::add_partials(seq, fmt, partial, c, uint32_t(count), plan.splits, g.accumulate, "gemm_reduce", epilogue,
                       g.n);
}

void linear_forward(Sequence& seq, Format fmt, BufferView x, BufferView w, BufferView y,
                    uint32_t batch, uint32_t in, uint32_t out, const GemmEpilogue& epilogue) {
  gemm(seq, fmt, {.m = batch, .n = out, .k = in, .trans_b = true}, x, w, y, epilogue);
}

void linear_backward_input(Sequence& seq, Format fmt, BufferView dy, BufferView w, BufferView dx,
                           uint32_t batch, uint32_t in, uint32_t out, bool accumulate) {
  gemm(seq, fmt, {.m = batch, .n = in, .k = out, .accumulate = accumulate}, dy, w, dx);
}

void linear_backward_weight(Sequence& seq, Format fmt, BufferView dy, BufferView x, BufferView dw,
                            uint32_t batch, uint32_t in, uint32_t out, bool accumulate) {
  gemm(seq, fmt, {.m = out, .n = in, .k = batch, .trans_a = true, .accumulate = accumulate}, dy, x, dw);
}

}  // namespace vkamp::ops
