// vkamp-bench gemm --tune and quant --tune: the GEMM tuner's sweeps
// (ops/gemm_tuner.hpp). For each class of fp16 product met in the shapes'
// products, times every kernel the device fits (gemm: the shader GEMM and
// each tensor-core shape; quant: each path of the blocks' shader GEMM),
// prints the table, and writes the winners to the per-device cache file that
// every later run reads.
#include "gemm_tune_bench.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

#include "bench_util.hpp"
#include "vkamp/ops/gemm_tuner.hpp"

namespace vkamp::bench {
namespace {

// A linear layer's three products at batch x in -> out, as vkamp-bench gemm
// names them: forward (m, n, k = batch, out, in), dX (batch, in, out), dW
// (out, in, batch).
std::vector<std::pair<const char*, ops::Gemm>> layer_products(uint32_t batch, uint32_t in, uint32_t out,
                                                               const std::vector<std::string>& forms) {
  std::vector<std::pair<const char*, ops::Gemm>> out_list;
  for (const std::string& f : forms) {
    if (f == "forward") out_list.push_back({"forward", {.m = batch, .n = out, .k = in, .trans_b = true}});
    if (f == "dx") out_list.push_back({"dX", {.m = batch, .n = in, .k = out}});
    if (f == "dw") out_list.push_back({"dW", {.m = out, .n = in, .k = batch, .trans_a = true}});
  }
  return out_list;
}

// Times each product's class (the first product met of each) on the
// kernels `order` gives for it, prints the table, and saves the winners
// class by class, so that a sweep stopped at a time limit keeps what it
// timed. Returns the exit status.
template <typename Order>
int sweep(Context& ctx, const std::vector<std::pair<const char*, ops::Gemm>>& products, Order order, double budget_s) {
  ops::GemmTuner& tuner = vkamp::ops::gemm_tuner(ctx);
  std::printf("%-14s %-8s %-17s %-22s %10s %9s\n", "class", "form", "m x n x k", "kernel", "ms", "TFLOP/s");
  std::set<std::string> done;
  for (const auto& [form, g] : products) {
    const std::string cls = ops::gemm_class(g);
    if (!done.insert(cls).second) continue;  // one product a class: the first met
    const std::vector<ops::GemmKernel> kernels = order(cls);
    const auto timings = ops::time_gemm_candidates(ctx, Format::F16, g, kernels, budget_s);
    const double flops = 2.0 * g.m * g.n * g.k;
    char shape[40];
    std::snprintf(shape, sizeof shape, "%ux%ux%u", g.m, g.n, g.k);
    for (const auto& t : timings)
      std::printf("%-14s %-8s %-17s %-22s %10.4f %9.2f\n", cls.c_str(), form, shape, t.kernel.name().c_str(), t.ms,
                  t.ms > 0 ? flops / (t.ms * 1e9) : 0.0);
    if (timings.size() < kernels.size())
      std::printf("%-14s %zu of %zu kernels timed within %.0f s\n", cls.c_str(), timings.size(), kernels.size(),
                  budget_s);
    const ops::GemmChoice c = ops::choice_from(timings, g.b_blocks.has_value());
    std::printf("%-14s winner %s (%.2f TFLOP/s)", cls.c_str(), c.winner.name().c_str(), flops / (c.winner_ms * 1e9));
    if (!g.b_blocks) {
      char mma_rate[32] = "not timed: the compiled-in one";
      if (c.best_mma_ms > 0) std::snprintf(mma_rate, sizeof mma_rate, "%.2f TFLOP/s", flops / (c.best_mma_ms * 1e9));
      std::printf(", best tensor-core shape %s (%s)", c.best_mma.name().c_str(), mma_rate);
    }
    std::printf("\n\n");
    tuner.set(cls, c);
    // Saved class by class: a sweep stopped at a time limit keeps what it timed.
    std::string why;
    if (!tuner.save(why)) {
      std::fprintf(stderr, "vkamp-bench: the winners were not saved: %s\n", why.c_str());
      return 1;
    }
    std::fflush(stdout);
  }
  std::printf("winners of %zu classes written to %s (%zu classes in all)\n", done.size(), tuner.path().c_str(),
              tuner.table().size());
  return 0;
}

}  // namespace

int run_gemm_tune(const std::string& device, const std::vector<std::array<uint32_t, 3>>& shapes,
                  const std::vector<std::string>& forms, double budget_s) {
  Context ctx(bench_context_options(device));
  if (ctx.gemm_mma() == GemmMma::off) {
    std::printf("vkamp-bench gemm --tune: no tensor-core GEMM on %s (VKAMP_COOPMAT=0, or no fp16 cooperative "
                "matrices: VKAMP_COOPMAT=emulate tunes the emulation); nothing to choose between\n",
                ctx.info().name.c_str());
    return 0;
  }
  const uint32_t lanes = vkamp::ops::gemm_tuner(ctx).lanes();
  std::vector<ops::GemmKernel> candidates = ops::gemm_candidates(ctx.info(), lanes);
  // Each --shapes MxNxK in every form (as vkamp-bench gemm --shape: the
  // form's product is M x N, summing K), else layers (batch, in, out):
  // charlm medium (64 x 256 tokens; d 384: attention's projections, the
  // MLP's 384 -> 1536 -> 384), the Fashion-MNIST MLP at batch 128, and
  // gpu_vs_torch.sh's square GEMMs.
  std::vector<std::pair<const char*, ops::Gemm>> products;
  for (const auto& s : shapes)
    for (const auto& [form, g] : layer_products(s[0], s[2], s[1], forms)) {
      ops::Gemm p = g;
      p.m = s[0], p.n = s[1], p.k = s[2];
      products.push_back({form, p});
    }
  if (shapes.empty()) {
    const std::array<uint32_t, 3> layers[] = {{16384, 384, 1152}, {16384, 384, 384}, {16384, 384, 1536},
                                              {16384, 1536, 384}, {128, 784, 256},   {128, 256, 256},
                                              {1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096},
                                              {8192, 8192, 8192}};
    for (const auto& l : layers)
      for (const auto& p : layer_products(l[0], l[1], l[2], forms)) products.push_back(p);
  }
  std::printf("GEMM tuning sweep on %s (%s), fp16, %s, %zu kernels a class (%u lanes), at most %.0f s a class\n",
              ctx.info().name.c_str(), ctx.info().driver.c_str(),
              ctx.gemm_mma() == GemmMma::coopmat ? "tensor cores" : "tensor-core tiling emulated", candidates.size(),
              lanes, budget_s);
  return sweep(ctx, products, [&](const std::string& cls) {
    // The compiled-in choices first, so that a budget cut still times them.
    const ops::GemmChoice d = ops::gemm_default_choice(ctx.info().vendor_id, cls);
    std::vector<ops::GemmKernel> order = candidates;
    std::stable_partition(order.begin(), order.end(),
                          [&](const ops::GemmKernel& k) { return k == d.winner || k == d.best_mma; });
    return order;
  }, budget_s);
}

int run_quant_tune(const std::string& device, const std::vector<LinearShape>& layers,
                   const std::vector<quant::GgmlType>& types, const std::vector<std::string>& forms, double budget_s) {
  Context ctx(bench_context_options(device));
  const std::vector<ops::GemmKernel> candidates = ops::gemm_quant_candidates(ctx.info());
  std::vector<std::pair<const char*, ops::Gemm>> products;
  for (const quant::GgmlType t : types)
    for (const LinearShape& l : layers)
      for (auto [form, g] : layer_products(l.tokens, l.in, l.out, forms)) {
        g.b_blocks = t;
        products.push_back({form, g});
      }
  std::printf("GEMM tuning sweep on %s (%s), fp16 products with B in ggml blocks, %zu paths a class, at most %.0f s "
              "a class\n",
              ctx.info().name.c_str(), ctx.info().driver.c_str(), candidates.size(), budget_s);
  return sweep(ctx, products, [&](const std::string&) { return candidates; }, budget_s);
}

}  // namespace vkamp::bench
