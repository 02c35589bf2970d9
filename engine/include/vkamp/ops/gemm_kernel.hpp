// Which kernel runs a GEMM: the shader GEMM (gemm.comp), or one shape of the
// tensor-core kernel family (gemm_mma.comp), and the classes of products the
// tuner picks a kernel for (ops/gemm_tuner.hpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vkamp/device_info.hpp"

namespace vkamp::ops {

struct Gemm;

// A gemm_mma.comp shape: `warps` subgroups (4 or 8; warps / 2 along m, 2
// along n), each holding frags_m x frags_n 16 x 16 fp32 accumulators, a
// BK-deep slice (32 or 64) staged once or twice (double_buffer).
struct GemmMmaShape {
  uint32_t warps = 4, frags_m = 2, frags_n = 2, bk = 32;
  bool double_buffer = false;
  uint32_t tile_m() const { return 16 * frags_m * (warps / 2); }
  uint32_t tile_n() const { return 16 * frags_n * 2; }
  // Shared memory the shader declares: the staged slices and one
  // accumulator a warp.
  uint32_t shared_bytes() const {
    return (double_buffer ? 2 : 1) * (tile_m() * (bk + 8) + bk * (tile_n() + 8)) * 2 + warps * 256 * 4;
  }
  bool operator==(const GemmMmaShape&) const = default;
};

struct GemmKernel {
  bool mma = false;    // false: the shader GEMM
  GemmMmaShape shape;  // with mma
  // The shader GEMM's path, where the tuner chose one: shared-memory tiles
  // or direct loads (unset: KernelPaths::gemm_tiled, else by device type),
  // and with direct loads the outputs per thread (unset: gemm_plan's).
  std::optional<bool> tiled;
  std::optional<std::pair<uint32_t, uint32_t>> block;
  // "shader", "shader-tiled", "shader-direct", "shader-direct-16x8", or
  // "mma-w8-f2x4-k32-db" (warps, fragments, BK, double- or single-buffered
  // "sb"): the name in the tuning table, the cache file, VKAMP_GEMM_KERNEL
  // and the run summary.
  std::string name() const;
  static std::optional<GemmKernel> parse(std::string_view name);
  bool operator==(const GemmKernel&) const = default;
};

// Every kernel the tuner may time on this device, the shader GEMM first:
// each gemm_mma.comp shape whose workgroup (warps x `lanes` invocations) and
// shared memory fit the device's limits.
std::vector<GemmKernel> gemm_candidates(const DeviceInfo& info, uint32_t lanes);
bool gemm_candidate_fits(const GemmKernel& k, const DeviceInfo& info, uint32_t lanes);
// The kernels the tuner times for a B held in ggml blocks (gemm.comp's
// ".quant" build): shared-memory tiles, and direct loads at each block of
// outputs per thread, the device type's own path first.
std::vector<GemmKernel> gemm_quant_candidates(const DeviceInfo& info);

// The class of a product, which the tuner keys its choice on: the
// transposes ("nt": A as stored, B transposed: a linear layer's forward;
// "nn" its dX, "tn" its dW) and a size bucket of m (times the batch), n and
// k each: S up to 128, M up to 512, L up to 2048, X beyond. E.g. "nt:X.L.L".
// A B held in ggml blocks adds its type: "nt:S.L.L:q4_k".
std::string gemm_class(const Gemm& g);
// Whether a class pattern ("nt:X.*.*", "*") covers a class: '*' matches a
// whole field.
bool gemm_class_matches(std::string_view pattern, std::string_view cls);
// A product of class cls (sizes 64, 256, 1024 and 4096 for S, M, L, X; B in
// the class's blocks, whose rows of 64 are whole blocks of 32-value types only).
Gemm gemm_class_example(const std::string& cls);
// Whether text is a class as gemm_class writes them.
bool gemm_class_valid(std::string_view cls);

}  // namespace vkamp::ops
