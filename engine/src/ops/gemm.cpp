#include "vkamp/ops/dequantize.hpp"
#include "vkamp/ops/gemm.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "gemm_detail.hpp"
#include "op_util.hpp"
#include "vkamp/config_error.hpp"
#include "vkamp/error.hpp"
#include "vkamp/ops/gemm_tuner.hpp"

namespace vkamp::ops {
namespace {

uint32_t pow2_at_least(uint32_t v) {
  uint32_t p = 1;
  while (p < v) p *= 2;
  return p;
}

// The shortest k slice worth a workgroup (and its share of the reduction).
constexpr uint32_t kMinSliceK = 256;
// Fewer tiles than this in all, and the tiles shrink along m: 2 workgroups
// on a 2-core CPU leave nothing to balance.
constexpr uint32_t kMinGroups = 8;
// Both sides of C at least this long, and the direct path takes 16 x 8 blocks.
constexpr uint32_t kBigBlockMin = 64;

}  // namespace

GemmPlan gemm_plan(const Gemm& g, bool tiled, std::optional<KernelPaths::Dims> block) {
  GemmPlan plan;
  // The direct path (CPU drivers) gives each thread 16 x 8 outputs where C
  // has room for them: lavapipe pays per lane for every load, and a 16 x 8
  // block loads 24 values per 128 fmas where 4 x 4 loads 8 per 16. Measured
  // on lavapipe (2 cores), fp32, 512^3: 16 x 8 about 1.2x 8 x 8, 8 x 8 about
  // 1.7x 4 x 4; 8 x 16 and 16 x 16 no better than 16 x 8.
  // Thin outputs keep 4 x 4, which pads them less.
  // `block` (e.g. 4x4, 16x8) forces one, for tests and benchmarks.
  if (!tiled) {
    if (g.m >= kBigBlockMin && g.n >= kBigBlockMin) plan.bm = 16, plan.bn = 8;
    if (block) {
      if (block->first < 1 || block->first > 16 || block->second < 1 || block->second > 16)
        throw ConfigError("the GEMM block is RxC, each 1 to 16 (e.g. 16x8), not " + std::to_string(block->first) +
                          "x" + std::to_string(block->second));
      plan.bm = block->first, plan.bn = block->second;
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
  detail::plan_split_k(g, tiles(), 1, plan.splits, plan.k_chunk);
  // A block of rows of a larger product splits k as the whole would (the
  // blocks' tiles alone would ask for more slices): the same sums.
  if (g.plan_rows && g.plan_rows != g.m) {
    Gemm whole = g;
    whole.m = g.plan_rows, whole.plan_rows = 0;
    const GemmPlan w = gemm_plan(whole, tiled, block);
    plan.splits = w.splits, plan.k_chunk = w.k_chunk;
  }
  return plan;
}

namespace detail {

void plan_split_k(const Gemm& g, uint64_t groups, uint32_t align, uint32_t& splits, uint32_t& k_chunk) {
  splits = 1, k_chunk = 0;
  const bool dense_c = (g.ldc == 0 || g.ldc == g.n) && g.first_c == 0;
  if (g.batch != 1 || !dense_c || groups == 0 || groups >= kBusyGroups || g.k < 2 * kMinSliceK) return;
  uint32_t want = uint32_t(std::min<uint64_t>(div_up(kBusyGroups, groups), g.k / kMinSliceK));
  k_chunk = div_up(div_up(g.k, want), align) * align;
  splits = div_up(g.k, k_chunk);  // no empty slice
}

}  // namespace detail

namespace {

// One operand's placement, resolved from a Gemm's fields (zeros filled in
// with the dense values), and the elements its view must hold.
struct Placement {
  uint64_t first = 0, stride = 0, outer_stride = 0;
  uint32_t ld = 0;
  uint64_t extent = 0;
};

// An operand stored as `rows` rows of `row_length` elements; checked to fit
// the shader's 32-bit indices.
Placement place(const char* operand, const Gemm& g, uint32_t inner, uint32_t rows, uint32_t row_length,
                uint32_t ld, uint64_t first, uint64_t stride, uint64_t outer_stride) {
  Placement p;
  p.ld = ld == 0 ? row_length : ld;
  if (p.ld < row_length)
    throw Error(std::string("gemm: ") + operand + "'s row stride " + std::to_string(p.ld) +
                " is shorter than its rows (" + std::to_string(row_length) + ")");
  const uint64_t size = rows == 0 ? 0 : uint64_t(rows - 1) * p.ld + row_length;
  p.first = first;
  p.stride = stride == 0 ? size : stride;
  p.outer_stride = outer_stride == 0 ? inner * p.stride : outer_stride;
  // The last product, and the last one of a full inner run, start furthest.
  uint64_t last = 0;
  if (g.batch > 0) {
    const uint32_t z = g.batch - 1, o = z / inner;
    last = o * p.outer_stride + (z % inner) * p.stride;
    if (o > 0) last = std::max(last, (o - 1) * p.outer_stride + (inner - 1) * p.stride);
  }
  p.extent = g.batch == 0 ? 0 : first + last + size;
  if (p.extent > UINT32_MAX)
    throw Error(std::string("gemm: ") + operand + " spans " + std::to_string(p.extent) +
                " elements, more than 32-bit indices reach");
  return p;
}

// The texel format through which gemm.comp's ".texel" build reads an
// operand of `fmt`: fp16 converts to float in the fetch, bf16 and cb16 come
// as their bit patterns.
VkFormat operand_texel_format(Format fmt) {
  switch (fmt) {
    case Format::F32: return VK_FORMAT_R32_SFLOAT;
    case Format::F16: return VK_FORMAT_R16_SFLOAT;
    default: return VK_FORMAT_R16_UINT;
  }
}

// `v` widened to start at the device's texel-view alignment; `first` is
// where v's own first element then lies in it.
BufferView texel_aligned(const BufferView& v, uint64_t alignment, size_t element_bytes, uint32_t& first) {
  size_t lead = v.offset % alignment;
  first = uint32_t(lead / element_bytes);
  return {*v.buffer, v.offset - lead, v.bytes + lead};
}

}  // namespace

bool gemm_takes_mma(const Context& ctx, Format fmt, const Gemm&) {
  return ctx.gemm_mma() != GemmMma::off && fmt == Format::F16;
}

bool gemm_texel_loads(const Context& ctx) {
  return ctx.paths().gemm_texel_loads.value_or(ctx.info().type == VK_PHYSICAL_DEVICE_TYPE_CPU);
}

void gemm(Sequence& seq, Format fmt, const Gemm& g, BufferView a, BufferView b, BufferView c,
          const GemmEpilogue& epilogue) {
  gemm_with(seq, fmt, g, gemm_tuner(seq.context()).choose(fmt, g), a, b, c, epilogue);
}

void gemm_with(Sequence& seq, Format fmt, const Gemm& g, const GemmKernel& kernel, BufferView a, BufferView b,
               BufferView c, const GemmEpilogue& epilogue, uint32_t lanes) {
  size_t eb = format_bytes(fmt);
  const uint32_t inner = g.inner == 0 ? std::max(g.batch, 1u) : g.inner;
  const Placement pa = place("A", g, inner, g.trans_a ? g.k : g.m, g.trans_a ? g.m : g.k, g.lda, g.first_a,
                             g.stride_a, g.outer_stride_a);
  const Placement pb = place("B", g, inner, g.trans_b ? g.n : g.k, g.trans_b ? g.k : g.n, g.ldb, g.first_b,
                             g.stride_b, g.outer_stride_b);
  const Placement pc = place("C", g, inner, g.m, g.n, g.ldc, g.first_c, g.stride_c, g.outer_stride_c);
  detail::require("gemm", "A", a, pa.extent, eb);
  if (g.b_blocks) {
    const quant::GgmlTypeInfo& q = quant::ggml_type_info(*g.b_blocks);
    const uint32_t row = g.trans_b ? g.k : g.n;
    if (g.batch != 1 || g.ldb != 0 || g.first_b != 0 || row % q.block_values != 0 || kernel.mma)
      throw Error(std::string("gemm: a B in ") + q.name + " blocks must be one dense product whose rows of " +
                  std::to_string(row) + " are whole blocks of " + std::to_string(q.block_values));
    if (b.bytes < quant::ggml_row_bytes(*g.b_blocks, pb.extent))
      throw Error(std::string("gemm: B holds ") + std::to_string(b.bytes) + " bytes, fewer than its " + q.name + " blocks");
  } else {
    detail::require("gemm", "B", b, pb.extent, eb);
  }
  detail::require("gemm", "C", c, pc.extent, eb);
  const bool fused = !epilogue.empty();
  if (fused && g.accumulate) throw Error("gemm: an epilogue (bias, activation) cannot accumulate into C");
  if (fused && g.batch != 1) throw Error("gemm: an epilogue (bias, activation) needs a single product");
  if (epilogue.z && !epilogue.act) throw Error("gemm: a pre-activation z needs an activation");
  if (epilogue.act_grad && (!epilogue.z || epilogue.bias || epilogue.act == Activation::ReLU))
    throw Error("gemm: an activation's backward in the epilogue needs z, no bias, and an activation other than ReLU");
  if (epilogue.bias) detail::require("gemm", "bias", *epilogue.bias, g.n, eb);
  if (epilogue.z) detail::require("gemm", "z", *epilogue.z, uint64_t(g.m) * g.n, eb);
  if (g.batch == 0 || g.m == 0 || g.n == 0) return;
  if (detail::gemm_in_binding_chunks(seq, fmt, g, kernel, a, b, c, epilogue, lanes)) return;
  // kc (split-k) and the texel views' lead are the path's to fill in.
  shader::GemmPush push{g.m, g.n, g.k, g.alpha, g.accumulate, 0,
                        uint32_t(pa.stride), uint32_t(pb.stride), uint32_t(pc.stride), 0,
                        uint32_t(pa.first), uint32_t(pb.first), uint32_t(pc.first), pa.ld, pb.ld, pc.ld,
                        inner, uint32_t(pa.outer_stride), uint32_t(pb.outer_stride), uint32_t(pc.outer_stride),
                        detail::z_mode(epilogue)};
  if (kernel.mma) {
    if (!gemm_takes_mma(seq.context(), fmt, g))
      throw Error("gemm: the tensor-core kernel " + kernel.name() + " runs fp16 products with VKAMP_COOPMAT on");
    return detail::gemm_mma(seq, fmt, g, kernel.shape, lanes, push, a, b, c, epilogue);
  }
  // Shared-memory tiles on GPUs, direct loads on CPU drivers (gemm.comp),
  // unless the kernel (a tuning) or the paths say otherwise.
  const KernelPaths& paths = seq.context().paths();
  const bool tiled =
      kernel.tiled.value_or(paths.gemm_tiled.value_or(seq.context().info().type != VK_PHYSICAL_DEVICE_TYPE_CPU));
  // A split product runs its epilogue in the reduction (gemm_reduce.comp),
  // so fusing keeps the split's parallelism.
  const GemmPlan plan = gemm_plan(g, tiled, kernel.block ? kernel.block : paths.gemm_block);
  const bool split = plan.splits > 1;
  const auto& info = seq.context().info();
  // The direct path reads the operands through texel views (CPU drivers)
  // where each fits one (maxTexelBufferElements).
  const bool texel = !tiled && !g.b_blocks && gemm_texel_loads(seq.context()) &&
                     a.bytes / eb + info.texel_offset_alignment <= info.max_texel_elements &&
                     b.bytes / eb + info.texel_offset_alignment <= info.max_texel_elements;
  // Through storage buffers, 16-row blocks on a driver with subgroups of 8
  // (lavapipe on AVX2/AVX-512): the 8 lanes along x share their 16 A values,
  // so each loads 2 and broadcasts them (gemm.comp SG_A). Texel fetches of
  // all 16 were as fast (bench/NOTES.md). KernelPaths::gemm_subgroup_a turns it off.
  const bool sg_a = !tiled && !texel && !g.b_blocks && plan.bm == 16 && plan.wx % 8 == 0 && info.subgroup_size == 8 &&
                    (info.subgroup_ops & VK_SUBGROUP_FEATURE_BALLOT_BIT) && paths.gemm_subgroup_a.value_or(true);
  const bool batched = g.batch > 1;
  uint32_t a_lead = 0, b_lead = 0;
  if (texel) {
    a = texel_aligned(a, info.texel_offset_alignment, eb, a_lead);
    b = texel_aligned(b, info.texel_offset_alignment, eb, b_lead);
  }
  push.kc = plan.k_chunk;
  push.a_first += a_lead;
  push.b_first += b_lead;
  // Activation codes are gemm.comp's ACT (shaders/common/activation_fn.glsl;
  // 0 none). A split product leaves its epilogue to the reduction, and
  // shares the plain product's pipeline.
  const uint32_t act = epilogue.act && !split ? uint32_t(*epilogue.act) : 0;
  const bool bias_here = epilogue.bias && !split;
  std::vector<uint32_t> constants{g.trans_a, g.trans_b, tiled, plan.wx, plan.wy, split, plan.bm, plan.bn,
                                  sg_a, batched, uint32_t(g.k_range), bias_here, act};
  if (g.b_blocks) constants = with_quant_type(std::move(constants), *g.b_blocks);
  auto kern = g.b_blocks ? detail::kernel<shader::GemmShader>(seq, fmt, constants, ".quant")
              : texel    ? detail::kernel<shader::GemmShader>(seq, fmt, constants, ".texel",
                                                         {operand_texel_format(fmt), operand_texel_format(fmt)})
                    : detail::kernel<shader::GemmShader>(seq, fmt, constants, sg_a ? ".subgroup" : "");
  detail::dispatch_gemm(seq, fmt, g, kern, push, div_up(g.n, plan.tile_n()), div_up(g.m, plan.tile_m()),
                        plan.splits, a, b, c, epilogue, "gemm");
}

namespace detail {

void dispatch_gemm(Sequence& seq, Format fmt, const Gemm& g, TypedKernel<shader::GemmPush> kern,
                   shader::GemmPush push, uint32_t tiles_n, uint32_t tiles_m, uint32_t splits, BufferView a,
                   BufferView b, BufferView c, const GemmEpilogue& epilogue, const char* label) {
  // Bindings the shader does not touch (no bias, no z, no split) hold C.
  const BufferView bias = epilogue.bias.value_or(c), z = epilogue.z.value_or(c);
  Groups groups{tiles_n, tiles_m, splits};
  if (splits == 1) {
    // Binding 3 (the partials) is never touched without SPLIT_K; C fills the slot.
    for (uint32_t z0 = 0; z0 < g.batch; z0 += 65535) {
      push.z0 = z0;
      groups.z = std::min(g.batch - z0, 65535u);
      seq.dispatch(kern, {a, b, c, c, bias, z}, push, groups, label);
    }
    return;
  }
  uint64_t count = uint64_t(g.m) * g.n;
  Sequence::ScratchScope scope(seq);
  BufferView partial = seq.scratch(count * splits * sizeof(float));
  seq.dispatch(kern, {a, b, c, partial, c, c}, push, groups, label);
  add_partials(seq, fmt, partial, c, uint32_t(count), splits, g.accumulate, "gemm_reduce", epilogue, g.n);
}

}  // namespace detail

void linear_forward(Sequence& seq, Format fmt, BufferView x, BufferView w, BufferView y,
                    uint32_t batch, uint32_t in, uint32_t out, const GemmEpilogue& epilogue,
                    std::optional<quant::GgmlType> w_blocks) {
  gemm(seq, fmt, {.m = batch, .n = out, .k = in, .trans_b = true, .b_blocks = w_blocks}, x, w, y, epilogue);
}

void linear_backward_input(Sequence& seq, Format fmt, BufferView dy, BufferView w, BufferView dx,
                           uint32_t batch, uint32_t in, uint32_t out, bool accumulate, const GemmEpilogue& epilogue,
                           std::optional<quant::GgmlType> w_blocks) {
  gemm(seq, fmt, {.m = batch, .n = in, .k = out, .accumulate = accumulate, .b_blocks = w_blocks}, dy, w, dx, epilogue);
}

void linear_backward_weight(Sequence& seq, Format fmt, BufferView dy, BufferView x, BufferView dw,
                            uint32_t batch, uint32_t in, uint32_t out, bool accumulate) {
  gemm(seq, fmt, {.m = out, .n = in, .k = batch, .trans_a = true, .accumulate = accumulate}, dy, x, dw);
}

}  // namespace vkamp::ops
