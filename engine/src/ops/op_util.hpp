// Shared plumbing for the op wrappers: picking the shader variant for a
// format and checking that buffers are large enough for the problem.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "vkamp/buffer.hpp"
#include "vkamp/context.hpp"
#include "vkamp/kernel.hpp"
#include "vkamp/ops/gemm.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::ops::detail {

// The kernel "<shader>.<variant of fmt>" with these buffers/push/constants.
// `variant` picks a build of the shader such as ".subgroup" (cmake/Shaders.cmake).
// `texel_formats` makes bindings uniform texel buffers (KernelSpec).
Kernel& kernel(Sequence& seq, const std::string& shader, Format fmt, uint32_t buffers,
               uint32_t push_bytes, std::vector<uint32_t> constants = {}, const std::string& variant = "",
               std::vector<VkFormat> texel_formats = {});

// A kernel path: `by_default`, unless the environment variable `var` is set
// (VKAMP_ROW_KERNEL=thread|group and the like, for tests and benchmarks);
// then whether it names `path`.
bool path_chosen(const char* var, const char* path, bool by_default);

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

// The multiplier and shifts with which fast_div() in
// shaders/common/fastdiv.glsl divides by d >= 1 (Granlund and Montgomery
// 1994, figure 4.1: exact for every 32-bit dividend). Laid out as the
// shader's uvec2.
struct FastDivisor {
  uint32_t mul = 0;
  uint32_t shifts = 0;  // shift1 | shift2 << 1
};
FastDivisor fast_divisor(uint32_t d);

}  // namespace vkamp::ops::detail
