// The GEMM tuner: timing candidates, and the per-context choice of a
// kernel per class (cache file, tuning on first use, compiled-in defaults).
#include "vkamp/ops/gemm_tuner.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "vkamp/buffer.hpp"
#include "vkamp/config_error.hpp"
#include "vkamp/error.hpp"
#include "vkamp/measure.hpp"
#include "vkamp/sequence.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::ops {
namespace {

// VKAMP_GEMM_TUNE=on: the most a class missing from the cache may spend
// being tuned when a run first meets it.
constexpr double kFirstUseBudgetS = 3.0;
// Dispatches per timed run, and timed runs per candidate.
constexpr uint32_t kRepeats = 8;
constexpr int kRuns = 3;
// Where a class's kernel came from when KernelPaths::gemm_kernel forced it,
// and a B in blocks' path when gemm_tiled or gemm_block did.
constexpr const char* kForcedSource = "VKAMP_GEMM_KERNEL";
constexpr const char* kPathsSource = "VKAMP_GEMM_TILED/_BLOCK";

}  // namespace

std::vector<GemmTiming> time_gemm_candidates(Context& ctx, Format fmt, const Gemm& g,
                                             const std::vector<GemmKernel>& candidates, double budget_s) {
  const auto start = std::chrono::steady_clock::now();
  // The product's shape alone: one dense product, the batch folded into m.
  Gemm t{.m = std::max(g.m * std::max(g.batch, 1u), 1u), .n = std::max(g.n, 1u), .k = std::max(g.k, 1u),
         .trans_a = g.trans_a, .trans_b = g.trans_b, .k_range = g.k_range, .b_blocks = g.b_blocks};
  std::mt19937 gen(12345);
  Buffer a = random_buffer(ctx, fmt, size_t(t.m) * t.k, gen);
  Buffer b = g.b_blocks ? random_blocks(ctx, *g.b_blocks, size_t(t.k) * t.n, gen)
                        : random_buffer(ctx, fmt, size_t(t.k) * t.n, gen);
  Buffer c(ctx, std::max<size_t>(size_t(t.m) * t.n * format_bytes(fmt), 16));
  std::vector<GemmTiming> out;
  for (const GemmKernel& k : candidates) {
    const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!out.empty() && spent > budget_s) break;
    // A split product is two dispatches a repeat: 2 kRepeats timestamps.
    Sequence seq(ctx, /*timestamps=*/true, 2 * kRepeats);
    seq.begin();
    for (uint32_t r = 0; r < kRepeats; ++r) gemm_with(seq, fmt, t, k, a, b, c);
    seq.end();
    seq.run();  // warm-up
    std::vector<double> runs;
    for (int i = 0; i < kRuns; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      seq.run();
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      const auto times = seq.timings();
      if (!times.empty()) {
        ms = 0;
        for (const auto& d : times) ms += d.ms;
      }
      runs.push_back(ms / kRepeats);
    }
    out.push_back({k, median(runs)});
  }
  return out;
}

GemmChoice choice_from(const std::vector<GemmTiming>& timings, bool b_blocks) {
  GemmChoice c;
  bool any = false, any_mma = false;
  for (const GemmTiming& t : timings) {
    if (!any || t.ms < c.winner_ms) c.winner = t.kernel, c.winner_ms = t.ms, any = true;
    if (t.kernel.mma && (!any_mma || t.ms < c.best_mma_ms)) c.best_mma = t.kernel, c.best_mma_ms = t.ms, any_mma = true;
  }
  if (!any_mma && !b_blocks) c.best_mma = gemm_default_choice(0, "*").best_mma;
  return c;
}

GemmTuner::GemmTuner(Context& ctx)
    : ctx_(ctx), mode_(ctx.paths().gemm_tune.value_or(GemmTuneMode::cached)), path_(gemm_tune_path(ctx.info())) {
  if (mode_ == GemmTuneMode::off || path_.empty()) return;
  std::ifstream in(vkamp::platform::path_from_utf8(path_), std::ios::binary);
  if (!in) return;  // not tuned yet: the defaults
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  std::string why;
  if (auto t = parse_tune_file(text, gemm_tune_key(ctx.info()), ctx.info(), lanes(), why)) {
    table_ = std::move(*t);
    return;
  }
  warning_ = "vkamp: ignoring the GEMM tuning cache " + path_ + " (" + why + "); the compiled-in kernels run" +
             (mode_ == GemmTuneMode::on ? " until tuned" : "");
  std::fprintf(stderr, "%s\n", warning_.c_str());
}

uint32_t GemmTuner::lanes() const { return gemm_mma_lanes(ctx_); }

GemmKernel GemmTuner::pick(const GemmChoice& c) const {
  GemmKernel k = ctx_.gemm_mma_auto() ? c.winner : c.best_mma;
  // A default too large for this device: the smallest shape, else the shader.
  if (!gemm_candidate_fits(k, ctx_.info(), lanes())) {
    const auto all = gemm_candidates(ctx_.info(), lanes());
    k = all.size() > 1 ? all[1] : GemmKernel{};
  }
  return k;
}

GemmKernel GemmTuner::choose(Format fmt, const Gemm& g) {
  if (!g.b_blocks && !gemm_takes_mma(ctx_, fmt, g)) return {};
  const std::string cls = gemm_class(g);
  const KernelPaths& paths = ctx_.paths();
  // No tensor-core kernel reads blocks: a forced mma kernel leaves them on
  // the shader GEMM's paths, which VKAMP_GEMM_TILED and _BLOCK force too.
  std::optional<GemmKernel> forced;
  if (paths.gemm_kernel) {
    forced = GemmKernel::parse(*paths.gemm_kernel);
    if (!forced)
      throw Error("the GEMM kernel (VKAMP_GEMM_KERNEL) is shader, shader-tiled, shader-direct[-RxC] or "
                  "mma-wW-fMxN-kK-db|sb, not \"" + *paths.gemm_kernel + "\"");
    if (g.b_blocks && forced->mma) forced.reset();
  }
  if (forced) {
    used_.try_emplace(cls, Use{cls, forced->name(), kForcedSource});
    return *forced;
  }
  if (g.b_blocks && (paths.gemm_tiled || paths.gemm_block)) {
    used_.try_emplace(cls, Use{cls, GemmKernel{}.name(), kPathsSource});
    return {};
  }
  if (const auto it = used_.find(cls); it != used_.end() && it->second.source != kForcedSource)
    return *GemmKernel::parse(it->second.kernel);
  std::string source = "cache";
  auto it = table_.find(cls);
  if (it == table_.end() && mode_ == GemmTuneMode::on) {
    it = table_.emplace(cls, choice_from(time_gemm_candidates(ctx_, fmt, g, first_use_order(cls, g), kFirstUseBudgetS),
                                         g.b_blocks.has_value()))
             .first;
    source = "tuned";
    std::string why;
    if (!save(why)) std::fprintf(stderr, "vkamp: the GEMM tuning cache was not saved: %s\n", why.c_str());
  }
  GemmKernel k;
  if (it != table_.end()) {
    k = g.b_blocks ? it->second.winner : pick(it->second);
  } else if (!g.b_blocks) {
    k = pick(gemm_default_choice(ctx_.info().vendor_id, cls));
    source = "default";
  } else {
    source = "default";  // the shader GEMM on the device type's path
  }
  used_[cls] = {cls, k.name(), source};
  return k;
}

std::vector<GemmKernel> GemmTuner::first_use_order(const std::string& cls, const Gemm& g) const {
  if (g.b_blocks) return gemm_quant_candidates(ctx_.info());
  // The defaults first, so that a short budget still times them.
  const GemmChoice d = gemm_default_choice(ctx_.info().vendor_id, cls);
  std::vector<GemmKernel> order{d.winner, d.best_mma};
  for (const GemmKernel& k : gemm_candidates(ctx_.info(), lanes()))
    if (std::find(order.begin(), order.end(), k) == order.end()) order.push_back(k);
  if (!ctx_.gemm_mma_auto()) std::erase_if(order, [](const GemmKernel& k) { return !k.mma; });
  std::erase_if(order, [&](const GemmKernel& k) { return !gemm_candidate_fits(k, ctx_.info(), lanes()); });
  return order;
}

std::vector<GemmTuner::Use> GemmTuner::used() const {
  std::vector<Use> out;
  for (const auto& [cls, u] : used_) out.push_back(u);
  return out;
}

bool GemmTuner::save(std::string& why) const {
  if (path_.empty()) {
    why = "no cache directory ($XDG_CACHE_HOME and $HOME unset)";
    return false;
  }
  std::error_code ec;
  std::filesystem::create_directories(vkamp::platform::path_from_utf8(path_).parent_path(), ec);
  const std::string tmp = path_ + ".tmp" + std::to_string(reinterpret_cast<uintptr_t>(this));
  {
    std::ofstream out(vkamp::platform::path_from_utf8(tmp), std::ios::binary);
    if (!(out << format_tune_file(gemm_tune_key(ctx_.info()), table_))) {
      why = "cannot write " + tmp;
      return false;
    }
  }
  std::filesystem::rename(vkamp::platform::path_from_utf8(tmp), vkamp::platform::path_from_utf8(path_), ec);
  if (ec) {
    std::filesystem::remove(vkamp::platform::path_from_utf8(tmp), ec);
    why = "cannot write " + path_;
    return false;
  }
  return true;
}

}  // namespace vkamp::ops
