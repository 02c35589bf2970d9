// KernelPaths: which kernel each op takes and which fusions the graph
// makes, as a value a Context holds (ContextOptions::paths). Two contexts in
// one process can run two paths side by side; a test or a benchmark picks a
// path by making a context with it, never through the environment.
//
// Every field unset means "the device's default", which the op that reads
// the field decides (a CPU driver and a GPU differ, and the data tables
// gemm_defaults.txt and attention_defaults.txt fill in what they hold).
// A Context fills the fields its options leave unset from the environment
// (the knob table's variables, read once, here: kernel_paths_from_env), so
// the environment stays the user's override and code wins over it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "vkamp/cooperative_matrix.hpp"

namespace vkamp {

// How fp16 GEMMs run (gemm_mma.comp): on the ordinary GEMM (off), on the
// tensor-core GEMM with cooperative matrices (coopmat: through
// VK_NV_cooperative_matrix or VK_KHR_cooperative_matrix, CoopmatApi), or on
// the same tiled GEMM with its multiply-accumulate emulated in plain GLSL
// (emulated: any device; the tests use it). Unset, coopmat where the device
// offers fp16 x fp16 -> fp32 cooperative matrices, and the GEMM tuner then
// picks per class of product between them and the shader GEMM
// (Context::gemm_mma_auto); its compiled-in choice is the shader GEMM for
// every class, so only a tuning measured on the device moves a class.
enum class GemmMma { off, emulated, coopmat };

// Where the tensor-core GEMM's kernel per class comes from (gemm_tuner.hpp):
// compiled-in defaults only (off), the per-device cache file, else the
// defaults (cached), or also a tuning on first use, saved (on).
enum class GemmTuneMode { off, cached, on };

enum class AttentionPath { fused, mma, materialized };
const char* attention_path_name(AttentionPath p);

struct KernelPaths {
  using Dims = std::pair<uint32_t, uint32_t>;

  // ---- the GEMM
  std::optional<GemmMma> gemm_mma;         // VKAMP_COOPMAT (0, 1, emulate; khr sets coopmat_api too)
  std::optional<CoopmatApi> coopmat_api;   // the coopmat build: unset, NV where the device runs it, else KHR
  std::optional<uint32_t> mma_lanes;       // the emulation's warp width: 16, 32 (default) or 64
  std::optional<GemmTuneMode> gemm_tune;   // default cached
  std::optional<std::string> gemm_kernel;  // every tensor-core-eligible fp16 GEMM on this kernel
                                           // ("shader" or mma-wW-fMxN-kK-db|sb); unset: the tuner's
  std::optional<bool> gemm_tiled;          // shared-memory tiles; default on GPUs, not on CPU drivers
  std::optional<Dims> gemm_block;          // the direct GEMM's outputs per thread, each side 1 to 16
  std::optional<bool> gemm_subgroup_a;     // the direct GEMM's subgroup broadcast of A; default on
  std::optional<bool> gemm_texel_loads;    // the direct GEMM reads through texel views; default on CPU drivers
  // ---- row kernels and reductions
  std::optional<bool> row_per_thread;      // LayerNorm/softmax rows: one invocation (default on CPU drivers)
                                           // or one workgroup each
  std::optional<bool> column_sum_gpu;      // column sums in many short chunks; default on GPUs
  std::optional<bool> embedding_scatter;   // the embedding's token gradient scattered (default on CPU
                                           // drivers) or scanned; the same bits
  std::optional<bool> pool_grad_window;    // pooling's backward per window where windows do not
                                           // overlap (default) or per input; the same bits
  // ---- attention
  std::optional<AttentionPath> attention;  // unset: attention_defaults.txt's row for the device
  std::optional<std::string> attention_tiles;  // gpu, cpu or RxT; unset: cpu on CPU drivers, else gpu
  // ---- the graph's fusions (all on by default)
  std::optional<bool> fuse_epilogue;       // bias and activation in the GEMM's epilogue
  std::optional<bool> fuse_act_grad;       // an activation's backward in the next dX GEMM's epilogue
  std::optional<bool> fuse_residual_grad;  // a residual add's input gradients in its own buffer

  // Field by field, this value's choice, else `fallback`'s.
  KernelPaths or_else(const KernelPaths& fallback) const;
  bool operator==(const KernelPaths&) const = default;
};

// The choices the environment makes (VKAMP_COOPMAT, VKAMP_GEMM_*,
// VKAMP_ATTENTION*, VKAMP_FUSE_*, ...; vkamp-info --knobs lists them). A
// value outside a variable's choices throws vkamp::ConfigError naming it.
KernelPaths kernel_paths_from_env();
// The same from "NAME=value,NAME=value" (the variables' names, VKAMP_
// optional; "default" or "" sets nothing): vkamp-bench --paths. An unknown
// name or a bad value throws ConfigError.
KernelPaths kernel_paths_from_settings(const std::string& text);

}  // namespace vkamp
