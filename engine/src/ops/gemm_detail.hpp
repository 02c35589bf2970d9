// What gemm.cpp and gemm_mma.cpp share: the split-k rule and the dispatch.
// Their push constants are vkamp/gpu_abi/gemm.h's GemmPush.
#pragma once
#include <cstdint>

#include "vkamp/gpu_abi/gemm.h"
#include "vkamp/kernel.hpp"
#include "vkamp/ops/gemm.hpp"

namespace vkamp::ops::detail {

// Workgroups a product should have before its k is split: enough for every
// core of a CPU driver and every multiprocessor of a large GPU.
constexpr uint32_t kBusyGroups = 128;

// k cut into `splits` slices of `k_chunk` (a multiple of `align`), when a
// single product's `groups` workgroups are too few to keep the device busy
// and k is long enough to share out; splits = 1 otherwise. Only a dense C
// can take the partial sums (gemm_reduce.comp).
void plan_split_k(const Gemm& g, uint64_t groups, uint32_t align, uint32_t& splits, uint32_t& k_chunk);

// Runs `kern` over `tiles_n` x `tiles_m` workgroups per product (times
// `splits`): a batch along z, 65535 products (the guaranteed
// maxComputeWorkGroupCount) per dispatch; a split product into fp32
// partials that gemm_reduce.comp adds, running the epilogue.
void dispatch_gemm(Sequence& seq, Format fmt, const Gemm& g, TypedKernel<shader::GemmPush> kern,
                   shader::GemmPush push, uint32_t tiles_n, uint32_t tiles_m, uint32_t splits, BufferView a,
                   BufferView b, BufferView c, const GemmEpilogue& epilogue, const char* label);

// Runs a product whose operands exceed one storage binding as several on
// views that fit (gemm_binding_chunks.cpp) and returns true; false, doing
// nothing, when every operand fits.
bool gemm_in_binding_chunks(Sequence& seq, Format fmt, const Gemm& g, const GemmKernel& kernel, BufferView a,
                            BufferView b, BufferView c, const GemmEpilogue& epilogue, uint32_t lanes);

// gemm() on the tensor-core GEMM (gemm_mma.comp) in `shape`, with push
// filled in but for kc; `lanes`: the emulation's warp width (0: 32).
void gemm_mma(Sequence& seq, Format fmt, const Gemm& g, const GemmMmaShape& shape, uint32_t lanes,
              shader::GemmPush push, BufferView a, BufferView b, BufferView c, const GemmEpilogue& epilogue);

}  // namespace vkamp::ops::detail
