// gemm() on the tensor-core GEMM (shaders/gemm_mma.comp): the tile plan and
// the dispatch. The shader's ".coopmat" build multiplies on cooperative
// matrices; the plain build emulates that step (Context's GemmMma).
#include <algorithm>

#include "gemm_detail.hpp"
#include "vkamp/knobs.hpp"
#include "op_util.hpp"

namespace vkamp::ops {
namespace {

// gemm_mma.comp's BK: the k depth of one staged slice, so split-k slices
// start on a slice.
constexpr uint32_t kSliceK = 32;

}  // namespace

GemmMmaPlan gemm_mma_plan(const Gemm& g) {
  // 128 x 128 tiles (4 x 4 accumulators a warp) where the product has
  // enough of them to fill the device: each staged value then feeds 4
  // multiplies per warp, not 2. Smaller products take 64 x 64 tiles.
  GemmMmaPlan big{.frags_m = 4, .frags_n = 4};
  auto tiles = [&](const GemmMmaPlan& p) {
    return uint64_t(div_up(g.m, p.tile_m())) * div_up(g.n, p.tile_n()) * g.batch;
  };
  GemmMmaPlan plan = tiles(big) >= detail::kBusyGroups ? big : GemmMmaPlan{};
  detail::plan_split_k(g, tiles(plan), kSliceK, plan.splits, plan.k_chunk);
  return plan;
}

namespace detail {

void gemm_mma(Sequence& seq, Format fmt, const Gemm& g, shader::GemmPush push, BufferView a, BufferView b,
              BufferView c, const GemmEpilogue& epilogue) {
  const Context& ctx = seq.context();
  const bool coopmat = ctx.gemm_mma() == GemmMma::coopmat;
  // A warp is a subgroup on tensor cores; the emulation's warps are only a
  // partition of the workgroup, as wide as NVIDIA's unless VKAMP_MMA_LANES
  // says otherwise (the tests run Intel's 16 and AMD's 64 too).
  const uint32_t lanes = coopmat ? ctx.info().subgroup_size : uint32_t(std::stoul(env_choice("VKAMP_MMA_LANES")));
  const GemmMmaPlan plan = gemm_mma_plan(g);
  const bool split = plan.splits > 1;
  push.kc = plan.k_chunk;
  // A split product runs its epilogue in the reduction.
  const uint32_t act = epilogue.act && !split ? uint32_t(*epilogue.act) : 0;
  const bool bias_here = epilogue.bias && !split;
  // Indexed by constant_id (gemm_common.glsl and gemm_mma.comp); gemm.comp's
  // ids that this shader does not have hold 0.
  std::vector<uint32_t> constants{g.trans_a, g.trans_b, 0, plan.warps_m * plan.warps_n * lanes, 0, split, 0, 0, 0,
                                  g.batch > 1, 0, bias_here, act, plan.warps_n, plan.frags_m, plan.frags_n, lanes};
  auto kern = kernel<shader::GemmMmaShader>(seq, fmt, constants, ctx.gemm_mma_build());
  dispatch_gemm(seq, fmt, g, kern, push, div_up(g.n, plan.tile_n()), div_up(g.m, plan.tile_m()), plan.splits, a, b,
                c, epilogue, "gemm_mma");
}

}  // namespace detail
}  // namespace vkamp::ops
