// vkamp-bench attention: causal attention's forward and backward at a
// GPT's shapes, the materialized path against the fused one at each tile
// size asked for, GPU-timed (bench/timed_copies.hpp), with the memory each
// keeps from forward to backward. Each path and tile size runs on a context
// of its own (KernelPaths::attention and attention_tiles), all timed in turns.
#include "attention_bench.hpp"

#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "app/charlm.hpp"
#include "timed_copies.hpp"
#include "vkamp/ops/attention.hpp"

namespace vkamp::bench {

const char* const kAttentionHelp =
    "Times causal self-attention's forward and backward (ops::attention_forward\n"
    "and attention_backward) at charlm's sizes, on each path: materialized (the\n"
    "batched GEMMs around a stored softmax), fused (FlashAttention-2's tiles)\n"
    "at each of --tiles, and in fp16 mma (the fused path on 16 x 16 fragments:\n"
    "tensor cores where the GEMM has them, else emulated) at each of --tiles\n"
    "(multiples of 16 only; others are listed as refused). Batch: tiny and\n"
    "small 16, medium 64, gpt2 8 (as bench/gpu_vs_torch.sh). GFLOP/s counts\n"
    "the four causal products of the backward and two of the forward (2 flops\n"
    "a multiply-add over the T (T + 1) / 2 pairs), the same count for every\n"
    "path; MiB is what the path keeps from forward to backward plus its\n"
    "backward's scratch.\n";

namespace {

// The batch each size runs at (bench/gpu_vs_torch.sh's for medium and gpt2).
uint32_t batch_of(const std::string& size) { return size == "medium" ? 64 : size == "gpt2" ? 8 : 16; }

struct Case {
  std::string size, path, tiles;  // tiles: "" for the device's own
  Format fmt;
  ops::AttentionShape shape;
  double flops_forward = 0, mib = 0;
  std::vector<std::unique_ptr<Buffer>> buffers;
  std::unique_ptr<TimedCopies> timed;
  std::string refused;  // why the case did not run
  Context* ctx = nullptr;  // one with this case's path and tiles
};

AttentionPath path_named(const std::string& p) {
  return p == "fused" ? AttentionPath::fused : p == "mma" ? AttentionPath::mma : AttentionPath::materialized;
}

void build(Case& c, std::mt19937& gen) {
  Context& ctx = *c.ctx;
  const ops::AttentionShape s = c.shape;
  const uint64_t rows = uint64_t(s.batch) * s.seq, eb = format_bytes(c.fmt);
  const uint64_t kept = s.batch * ops::attention_kept_elements(ctx, c.fmt, s.seq, s.channels, s.heads);
  const uint64_t work = s.batch * ops::attention_workspace_elements(ctx, c.fmt, s.seq, s.channels, s.heads);
  c.mib = double(kept + work) * eb / (1 << 20);
  auto buf = [&](uint64_t n) {
    c.buffers.push_back(std::make_unique<Buffer>(random_buffer(ctx, c.fmt, n, gen)));
    return c.buffers.back().get();
  };
  Buffer *qkv = buf(rows * 3 * s.channels), *y = buf(rows * s.channels), *dy = buf(rows * s.channels);
  Buffer *dqkv = buf(rows * 3 * s.channels), *k = buf(kept), *w = buf(work);
  const Format fmt = c.fmt;
  c.timed = std::make_unique<TimedCopies>(
      ctx, std::vector<TimedCopies::Part>{
               [=](Sequence& q) { ops::attention_forward(q, fmt, *qkv, *y, *k, s); },
               [=](Sequence& q) { ops::attention_backward(q, fmt, *qkv, *y, *k, *dy, *dqkv, *w, s, false); }});
}

}  // namespace

int run_attention(const std::string& device, int repeats, const std::vector<std::string>& sizes,
                  const std::vector<std::string>& tiles, std::vector<Format> formats) {
  // A context per path and tile size ("" tiles: the device's own), made on first use.
  std::map<std::pair<std::string, std::string>, std::unique_ptr<Context>> contexts;
  auto context_for = [&](const std::string& path, const std::string& tiles) -> Context& {
    auto& c = contexts[{path, tiles}];
    if (!c) {
      ContextOptions opt = bench_context_options(device);
      opt.paths.attention = path_named(path);
      if (!tiles.empty()) opt.paths.attention_tiles = tiles;
      c = std::make_unique<Context>(opt);
    }
    return *c;
  };
  Context& ctx = context_for("materialized", "");
  const auto& info = ctx.info();
  if (repeats == 0) repeats = 5;
  std::printf("device   [%u] %s (%s)\n", info.index, info.name.c_str(), info.driver.c_str());
  std::fflush(stdout);

  std::mt19937 gen(12345);
  std::vector<Case> cases;
  for (const std::string& size : sizes) {
    app::LmOptions lm;
    lm.size = size;
    const models::GptConfig g = app::gpt_config(lm, 65);
    const ops::AttentionShape shape{batch_of(size), g.block_size, g.n_embd, g.n_head};
    const double pairs = 0.5 * shape.seq * (shape.seq + 1.0);
    const double flops = 4.0 * shape.batch * shape.heads * pairs * (shape.channels / shape.heads);
    for (Format f : formats) {
      cases.push_back({size, "materialized", "", f, shape, flops});
      for (const std::string& t : tiles) cases.push_back({size, "fused", t == "device" ? "" : t, f, shape, flops});
      // The fused kernels on fragments take fp16 only (elsewhere mma runs the fused kernels again).
      if (f == Format::F16)
        for (const std::string& t : tiles) cases.push_back({size, "mma", t == "device" ? "" : t, f, shape, flops});
    }
  }
  std::printf("shapes  ");
  for (size_t i = 0; i < cases.size(); ++i)
    if (i == 0 || cases[i].size != cases[i - 1].size)
      std::printf(" %s: batch %u, T %u, C %u, %u heads;", cases[i].size.c_str(), cases[i].shape.batch,
                  cases[i].shape.seq, cases[i].shape.channels, cases[i].shape.heads);
  std::printf("\n");
  for (Case& c : cases) {
    std::printf("building %s %s %s%s%s\n", c.size.c_str(), format_name(c.fmt), c.path.c_str(), c.tiles.empty() ? "" : " ",
                c.tiles.c_str());
    std::fflush(stdout);
    try {
      c.ctx = &context_for(c.path, c.tiles);
      build(c, gen);
    } catch (const std::exception& e) {  // a shape the path refuses here (a CPU driver's loop limit)
      c.refused = e.what();
      c.buffers.clear();
    }
  }
  for (int i = 0; i < repeats; ++i)
    for (Case& c : cases)
      if (c.timed) c.timed->timed_run();

  std::printf("\ntiming   GPU timestamps, median per part of R copies x %d timed runs, after a warm-up run\n\n",
              repeats);
  std::printf("%-6s %-6s %-13s %-7s %10s %10s %9s %8s %4s\n", "size", "format", "path", "tiles", "fwd ms", "bwd ms",
              "GFLOP/s", "MiB", "R");
  for (const Case& c : cases) {
    // mma without tensor cores runs their emulation: a test path, not a rival.
    const std::string path = c.path == "mma" && ctx.gemm_mma() != GemmMma::coopmat ? "mma-emulated" : c.path;
    std::printf("%-6s %-6s %-13s %-7s ", c.size.c_str(), format_name(c.fmt), path.c_str(),
                c.tiles.empty() ? (c.path == "materialized" ? "-" : "device") : c.tiles.c_str());
    if (!c.timed) {
      std::printf("refused: %s\n", c.refused.c_str());
      continue;
    }
    const double fwd = c.timed->median_ms(0), bwd = c.timed->median_ms(1);
    std::printf("%10.3f %10.3f %9.1f %8.2f %4u\n", fwd, bwd, 3 * c.flops_forward / ((fwd + bwd) * 1e6), c.mib,
                c.timed->copies());
  }
  return 0;
}

}  // namespace vkamp::bench
