#include "op_util.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>

#include "vkamp/gpu_abi/gemm_reduce.h"
#include "vkamp/error.hpp"

namespace vkamp::ops::detail {

void add_partials(Sequence& seq, Format fmt, BufferView partial, BufferView out, uint32_t count, uint32_t splits,
                  bool accumulate, const char* label, const GemmEpilogue& epilogue, uint32_t cols) {
  const shader::GemmReducePush push{count, splits, accumulate ? 1u : 0u, std::max(cols, 1u), z_mode(epilogue)};
  const uint32_t act = epilogue.act ? uint32_t(*epilogue.act) : 0;  // gemm_reduce.comp's ACT; 0 none
  auto reduce = kernel<shader::GemmReduceShader>(seq, fmt, {epilogue.bias.has_value(), act});
  // Bindings the shader does not touch (no bias, no z) hold out.
  seq.dispatch(reduce, {partial, out, epilogue.bias.value_or(out), epilogue.z.value_or(out)}, push,
               grid_stride_groups(count), label);
}

uint32_t z_mode(const GemmEpilogue& epilogue) {
  if (!epilogue.z) return kGemmZNone;
  return epilogue.act_grad ? kGemmZGrad : kGemmZKeep;
}

uint32_t column_sum_chunk_rows(const Context& ctx, uint32_t rows, uint32_t cols, uint32_t max_rows) {
  const uint32_t min_rows = std::min(64u, max_rows), col_groups = std::max(1u, div_up(cols, 256));
  if (ctx.paths().column_sum_gpu.value_or(ctx.info().type != VK_PHYSICAL_DEVICE_TYPE_CPU)) {
    // An H100 has 132 multiprocessors of up to 2048 threads: 1024 groups of
    // 256 are about one full wave.
    const uint32_t chunks = std::max(1u, 1024 / col_groups);
    return std::clamp(div_up(rows, chunks), min_rows, max_rows);
  }
  // llvmpipe runs a workgroup's invocations 8 at a time, each batch over
  // the whole chunk: a chunk of at most 2 MiB (as fp32) is still in cache
  // when the next batch reads the neighbouring columns. Narrow sums keep
  // one long chunk: more chunks only add a pass (bench/NOTES.md).
  return std::clamp((2u << 20) / (4 * std::max(cols, 1u)), min_rows, max_rows);
}

uint32_t rows_per_binding(const Context& ctx, const char* op, uint64_t row_bytes) {
  const uint64_t range = ctx.info().max_storage_range, align = std::max<uint64_t>(ctx.info().storage_offset_alignment, 1);
  // A chunk's start, first x row_bytes, is a multiple of the alignment when
  // first is a multiple of align / gcd(row_bytes, align).
  const uint64_t granule = align / std::gcd(row_bytes, align);
  const uint64_t rows = range / row_bytes / granule * granule;
  if (rows == 0)
    throw Error(std::string(op) + ": one row of " + std::to_string(row_bytes) + " bytes (in chunks aligned for a binding) is more than the " +
                std::to_string(range) + " bytes a storage binding holds on this device");
  return uint32_t(std::min<uint64_t>(rows, UINT32_MAX / 2));
}

void require(const char* op, const char* operand, const BufferView& v, uint64_t elements,
             size_t bytes_per_element) {
  uint64_t need = elements * bytes_per_element;
  if (v.bytes < need)
    throw Error(std::string(op) + ": " + operand + " holds " + std::to_string(v.bytes) +
                " bytes, needs " + std::to_string(need));
}

FastDivisor fast_divisor(uint32_t d) {
  if (d == 0) throw Error("fast_divisor: division by zero");
  uint32_t l = 0;  // ceil(log2(d))
  while ((uint64_t(1) << l) < d) ++l;
  // m = floor(2^32 (2^l - d) / d) + 1 < 2^32; the product fits 64 bits as 2^l - d < d.
  uint32_t m = uint32_t(((uint64_t(1) << 32) * ((uint64_t(1) << l) - d)) / d + 1);
  uint32_t shift1 = l < 1 ? l : 1, shift2 = l > 0 ? l - 1 : 0;
  return {m, shift1 | (shift2 << 1)};
}

}  // namespace vkamp::ops::detail
