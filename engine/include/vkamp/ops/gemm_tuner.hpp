// The GEMM autotuner: which kernel (the shader GEMM or a tensor-core shape,
// ops/gemm_kernel.hpp) runs each class of fp16 product on this device, and
// which path of the shader GEMM a product with B in ggml blocks takes.
//
// A choice comes from, in order: the per-device cache file that
// `vkamp-bench gemm --tune`, `vkamp-bench quant --tune` (or
// VKAMP_GEMM_TUNE=on) writes under the user's
// cache directory, keyed by vendor, device, driver version and vkamp
// version; a tuning run on first use (VKAMP_GEMM_TUNE=on only, bounded in
// time); the compiled-in defaults (engine/src/ops/gemm_defaults.txt). A
// corrupt or foreign cache file is ignored with one warning. The choice for
// a class is made once per Context, so one configuration always runs the
// same kernels and gives the same bits.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vkamp/context.hpp"
#include "vkamp/ops/gemm.hpp"

namespace vkamp::ops {

// The tune mode is KernelPaths::gemm_tune (GemmTuneMode: off, cached, on).

struct GemmChoice {
  GemmKernel winner;    // fastest of all candidates, the shader GEMM included
  GemmKernel best_mma;  // fastest tensor-core shape (what VKAMP_COOPMAT=1 and =emulate run); the shader for blocks
  double winner_ms = 0, best_mma_ms = 0;  // as timed; 0: not timed (defaults)
  bool operator==(const GemmChoice&) const = default;
};
using GemmTuneTable = std::map<std::string, GemmChoice>;  // by gemm_class

// Whose timings a cache file holds.
struct GemmTuneKey {
  uint32_t vendor = 0, device = 0, driver = 0;
  std::string vkamp;  // vkamp's version
  bool operator==(const GemmTuneKey&) const = default;
};
GemmTuneKey gemm_tune_key(const DeviceInfo& info);
// platform::user_cache_dir()/gemm-tune-<vendor>-<device>.txt;
// empty where user_cache_dir() is.
std::string gemm_tune_path(const DeviceInfo& info);
std::string format_tune_file(const GemmTuneKey& key, const GemmTuneTable& table);
// The table a file's text holds, or nullopt and why ("corrupt: ..." or
// "foreign: ..."). Kernels that do not fit `info` make a file corrupt.
std::optional<GemmTuneTable> parse_tune_file(const std::string& text, const GemmTuneKey& key,
                                             const DeviceInfo& info, uint32_t lanes, std::string& why);
// The compiled-in choice for a class on a vendor's devices.
GemmChoice gemm_default_choice(uint32_t vendor, const std::string& cls);

struct GemmTiming {
  GemmKernel kernel;
  double ms = 0;  // per product, median of the timed runs
};
// Times `candidates` in order on product g's shape (fresh random operands,
// batch folded into m) until budget_s seconds have passed (at least one).
std::vector<GemmTiming> time_gemm_candidates(Context& ctx, Format fmt, const Gemm& g,
                                             const std::vector<GemmKernel>& candidates, double budget_s);
// The fastest overall and the fastest mma of timings (ties: the earlier);
// with `b_blocks` (a B in ggml blocks, which no mma kernel reads) no best mma.
GemmChoice choice_from(const std::vector<GemmTiming>& timings, bool b_blocks = false);

class GemmTuner : public ContextExtension {
 public:
  explicit GemmTuner(Context& ctx);
  // The kernel gemm() runs for g (the shader GEMM where gemm_takes_mma is
  // false). KernelPaths::gemm_kernel, where set, wins (for tests and
  // benchmarks). A B in ggml blocks runs the shader GEMM on the path the
  // cache names for its class (gemm_quant_candidates), else the device
  // type's, unless KernelPaths::gemm_tiled or gemm_block force one.
  GemmKernel choose(Format fmt, const Gemm& g);
  struct Use {
    std::string cls, kernel, source;  // source: cache, tuned, default, VKAMP_GEMM_KERNEL, VKAMP_GEMM_TILED/_BLOCK
  };
  // Every class chosen so far, in class order.
  std::vector<Use> used() const;
  // The warning the cache file gave at load (empty if none).
  const std::string& warning() const { return warning_; }
  const std::string& path() const { return path_; }
  const GemmTuneTable& table() const { return table_; }
  // A tuned class (vkamp-bench gemm --tune, quant --tune), kept and saved with the rest.
  void set(const std::string& cls, const GemmChoice& choice) { table_[cls] = choice; }
  // Writes the table to the cache file (atomically); false and why if not.
  bool save(std::string& why) const;
  // The emulation's / subgroup's warp width the candidates are built for.
  uint32_t lanes() const;

 private:
  GemmKernel pick(const GemmChoice& c) const;
  // What a class missing from the cache times on first use (VKAMP_GEMM_TUNE=on).
  std::vector<GemmKernel> first_use_order(const std::string& cls, const Gemm& g) const;

  Context& ctx_;
  GemmTuneMode mode_;
  std::string path_, warning_;
  GemmTuneTable table_;
  std::map<std::string, Use> used_;
};

// The kernel choices of ctx's GEMMs, made on first use and kept with ctx.
inline GemmTuner& gemm_tuner(Context& ctx) { return ctx.extension<GemmTuner>(); }

}  // namespace vkamp::ops
