// gemm() on the tensor-core GEMM (shaders/gemm_mma.comp) in one of its
// shapes: the tile plan, the fast paths the operands allow, and the dispatch.
// The shader's ".coopmat" build multiplies on cooperative matrices; the
// plain build emulates that step (Context's GemmMma).
#include <algorithm>

#include "gemm_detail.hpp"
#include "op_util.hpp"
#include "vkamp/error.hpp"

namespace vkamp::ops {
namespace {

bool multiple_of_8(uint64_t v) { return v % 8 == 0; }

}  // namespace

uint32_t gemm_mma_lanes(const Context& ctx) {
  if (ctx.gemm_mma() == GemmMma::coopmat) return ctx.info().subgroup_size;
  return ctx.paths().mma_lanes.value_or(32);
}

GemmMmaPlan gemm_mma_plan(const Gemm& g, const GemmMmaShape& shape) {
  GemmMmaPlan plan{.shape = shape};
  if (g.k_range != KRange::all) return plan;  // K_RANGE's slices start at the tile's rows
  const uint32_t m = g.plan_rows ? g.plan_rows : g.m;  // split as the whole product would
  const uint64_t tiles = uint64_t(div_up(m, plan.tile_m())) * div_up(g.n, plan.tile_n()) * g.batch;
  detail::plan_split_k(g, tiles, shape.bk, plan.splits, plan.k_chunk);
  return plan;
}

namespace detail {

void gemm_mma(Sequence& seq, Format fmt, const Gemm& g, const GemmMmaShape& shape, uint32_t lanes,
              shader::GemmPush push, BufferView a, BufferView b, BufferView c, const GemmEpilogue& epilogue) {
  const Context& ctx = seq.context();
  const bool coopmat = ctx.gemm_mma() == GemmMma::coopmat;
  // A warp is a subgroup on tensor cores; the emulation's warps are only a
  // partition of the workgroup, as wide as NVIDIA's unless VKAMP_MMA_LANES
  // (or a test's `lanes`) says otherwise.
  if (lanes == 0 || coopmat) lanes = gemm_mma_lanes(ctx);
  if (!gemm_candidate_fits({.mma = true, .shape = shape}, ctx.info(), lanes))
    throw Error("gemm: kernel " + GemmKernel{.mma = true, .shape = shape}.name() + " does not fit device \"" +
                ctx.info().name + "\" (workgroup size or shared memory)");
  const GemmMmaPlan plan = gemm_mma_plan(g, shape);
  const bool split = plan.splits > 1;
  push.kc = plan.k_chunk;
  // 16-byte loads need every operand row and product to start on a multiple
  // of 8 values (the views' starts are the descriptors' own).
  const bool batched = g.batch > 1;
  const bool vec = multiple_of_8(push.lda) && multiple_of_8(push.ldb) && multiple_of_8(push.a_first) &&
                   multiple_of_8(push.b_first) &&
                   (!batched || (multiple_of_8(push.sa) && multiple_of_8(push.sb) && multiple_of_8(push.a_outer) &&
                                 multiple_of_8(push.b_outer)));
  // Straight stores when nothing reads the elements on their way to C, and
  // C's rows and products start where a cooperative-matrix store may.
  const bool direct = !split && !g.accumulate && epilogue.empty() && multiple_of_8(push.ldc) &&
                      multiple_of_8(push.c_first) &&
                      (!batched || (multiple_of_8(push.sc) && multiple_of_8(push.c_outer)));
  // A split product runs its epilogue in the reduction.
  const uint32_t act = epilogue.act && !split ? uint32_t(*epilogue.act) : 0;
  const bool bias_here = epilogue.bias && !split;
  // Indexed by constant_id (gemm_common.glsl and gemm_mma.comp); gemm.comp's
  // ids that this shader does not have hold 0.
  std::vector<uint32_t> constants{g.trans_a, g.trans_b, 0, shape.warps * lanes, 0, split, 0, 0, 0,
                                  batched, uint32_t(g.k_range), bias_here, act, 2, shape.frags_m, shape.frags_n,
                                  lanes, shape.bk, shape.double_buffer};
  // Run-time flags, not constants (gemm_mma.comp): one pipeline for both.
  push.accumulate |= (vec ? 2u : 0u) | (direct ? 4u : 0u);
  auto kern = kernel<shader::GemmMmaShader>(seq, fmt, constants, ctx.gemm_mma_build());
  dispatch_gemm(seq, fmt, g, kern, push, div_up(g.n, plan.tile_n()), div_up(g.m, plan.tile_m()), plan.splits, a, b,
                c, epilogue, "gemm_mma");
}

}  // namespace detail
}  // namespace vkamp::ops
