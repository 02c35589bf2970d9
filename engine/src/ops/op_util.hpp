// Shared plumbing for the op wrappers: picking the shader variant for a
// format and checking that buffers are large enough for the problem.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "vkamp/gpu_abi/macros.h"
#include "vkamp/buffer.hpp"
#include "vkamp/context.hpp"
#include "vkamp/kernel.hpp"
#include "vkamp/ops/gemm.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::ops::detail {

// The kernel of `Shader` (a handle from vkamp/gpu_abi/, such as
// shader::ScaleShader) for fmt, with these specialization constants.
// `build` picks a build of the shader such as ".subgroup" (cmake/Shaders.cmake).
// `texel_formats` makes bindings uniform texel buffers (KernelSpec).
template <class Shader>
TypedKernel<typename Shader::Push> kernel(Sequence& seq, Format fmt, std::vector<uint32_t> constants = {},
                                          const std::string& build = "", std::vector<VkFormat> texel_formats = {}) {
  return seq.context().kernel<Shader>(fmt, std::move(constants), build, std::move(texel_formats));
}

// The shaders index with 32-bit unsigned integers, and a grid-stride loop
// steps up to 2^24 past its last element: tensors below 2^31 elements keep
// both from wrapping.
inline constexpr uint64_t kMaxIndexedElements = (uint64_t(1) << 31) - 1;

// A grid-stride 1-D grid over n elements: 256-wide workgroups, at most 65535.
inline Groups grid_stride_groups(uint64_t n) { return {uint32_t(std::min<uint64_t>((n + 255) / 256, 65535))}; }

// Rows per chunk of a column sum (bias_grad.comp, layer_norm_param_grad.comp:
// one invocation per column in 256-wide workgroups, one workgroup row per
// chunk, the chunks' fp32 partials then added in order by add_partials).
// GPUs: about 1024 workgroups in all, to fill the device, but at least 64
// rows a chunk, so the partials stay a few percent of the bytes read. CPU
// drivers: chunks of about 2 MiB, so the samples' narrow biases keep their
// long chunks and wide ones stay in cache. Never more than `max_rows`, which the
// caller keeps below lavapipe's 65535-iteration loop limit. The choice
// changes the rounding, so a GPU and a CPU driver may differ in the last
// bits; each gives the same bits on every run. VKAMP_COLUMN_SUM=gpu|cpu
// overrides, for tests and benchmarks.
uint32_t column_sum_chunk_rows(const Context& ctx, uint32_t rows, uint32_t cols, uint32_t max_rows);

// How many rows of `row_bytes` bytes one storage binding holds: at most the
// device's maxStorageBufferRange, in a whole number of rows that keeps each
// chunk's start minStorageBufferOffsetAlignment-aligned when the whole
// view's is. A row larger than one binding is an Error naming `op`.
uint32_t rows_per_binding(const Context& ctx, const char* op, uint64_t row_bytes);

// f(first_row, rows) for each chunk of rows_per_binding rows, in order.
template <class F>
void for_each_binding_chunk(const Context& ctx, const char* op, uint64_t row_bytes, uint32_t rows, F f) {
  const uint32_t step = rows_per_binding(ctx, op, row_bytes);
  for (uint32_t first = 0; first < rows; first += step) f(first, std::min(step, rows - first));
}

// Rows [first, first + n) of a view of rows of `row_bytes` bytes.
inline BufferView row_view(BufferView v, uint64_t row_bytes, uint32_t first, uint32_t n) {
  return BufferView(*v.buffer, v.offset + first * row_bytes, n * row_bytes);
}

// Throws a vkamp::Error naming the op and operand when the view holds fewer
// than `elements` values of `bytes_per_element` bytes.
void require(const char* op, const char* operand, const BufferView& v, uint64_t elements,
             size_t bytes_per_element);

// The second pass of every split sum (split-k GEMM, chunked column sums):
// out[i] = sum over z of partial[z][i] (+ out[i] when accumulate), the
// `splits` fp32 partials of `count` values each added in z order and rounded
// once to fmt (gemm_reduce.comp), so the result is the same on every device.
// A split GEMM's epilogue runs here too: out is then rows of `cols` values
// (the epilogue's bias length).
void add_partials(Sequence& seq, Format fmt, BufferView partial, BufferView out, uint32_t count, uint32_t splits,
                  bool accumulate, const char* label, const GemmEpilogue& epilogue = {}, uint32_t cols = 1);
// The epilogue's use of its z binding: vkamp/gpu_abi/gemm_epilogue.h's kGemmZ*.
uint32_t z_mode(const GemmEpilogue& epilogue);

// The multiplier and shifts with which fast_div() in
// shaders/common/fastdiv.glsl divides by d >= 1 (Granlund and Montgomery
// 1994, figure 4.1: exact for every 32-bit dividend), as the shader's uvec2:
// x the multiplier, y shift1 | shift2 << 1.
using FastDivisor = shader::uvec2;
FastDivisor fast_divisor(uint32_t d);

}  // namespace vkamp::ops::detail
