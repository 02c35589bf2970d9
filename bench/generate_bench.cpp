// vkamp-bench generate: wall-clock time per generated token of a GPT as
// charlm samples it, positions 0 .. block_size - 1 (the window filling up),
// two ways: models::GptDecoder (one row per token against the cached keys
// and values) and the full forward over the window so far (what
// generation did before the cache, and still does once the text is longer
// than the window). Wall clock, not GPU timestamps: a token's time
// includes the host's submit and wait, which generation pays per token.
// The two ways take turns run by run, so a change in the machine's load
// shifts both alike and the ratio holds.
#include "generate_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "app/charlm.hpp"
#include "bench_util.hpp"
#include "vkamp/context.hpp"
#include "vkamp/models/gpt.hpp"
#include "vkamp/models/gpt_decoder.hpp"
#include "vkamp/train/evaluator.hpp"
#include "vkamp/train/model.hpp"

namespace vkamp::bench {

const char* const kGenerateHelp =
    "Times a GPT's generation per token while the window fills (positions 0 to\n"
    "block_size - 1), with the KV cache (models::GptDecoder: one row per token)\n"
    "and with the full forward over the window so far (one window per token),\n"
    "in turns, and prints the median milliseconds per token of each and their\n"
    "ratio. Sizes are charlm's: tiny (2 layers, 4 heads, 64 channels, block 64)\n"
    "and medium (6, 6, 384, block 256: nanoGPT's shakespeare_char); vocabulary\n"
    "65. Random weights: the time does not depend on them.\n";

namespace {

// charlm's size (app/charlm.cpp's table), at a vocabulary of 65.
models::GptConfig size_config(const std::string& size) {
  app::LmOptions lm;
  lm.size = size;
  return app::gpt_config(lm, 65);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int run_generate(const std::string& device, int repeats, const std::string& size, std::vector<Format> formats) {
  const models::GptConfig c = size_config(size);
  if (repeats == 0) repeats = size == "medium" ? 3 : 5;
  ContextOptions opt;
  opt.device = device;
  Context ctx(opt);
  std::printf("device   %s\nmodel    GPT %s: %u layers, %u heads, %u channels, block %u, vocabulary %u\n",
              ctx.info().name.c_str(), size.c_str(), c.n_layer, c.n_head, c.n_embd, c.block_size, c.vocab_size);
  std::printf("timing   wall clock per token over positions 0..%u, median of %d runs of each way, in turns\n\n",
              c.block_size - 1, repeats);
  std::printf("%-6s %14s %14s %10s\n", "format", "cache ms/tok", "window ms/tok", "speedup");
  std::mt19937_64 gen(1);
  std::vector<uint32_t> ids(c.block_size);
  for (uint32_t& t : ids) t = uint32_t(gen() % c.vocab_size);
  for (Format fmt : formats) {
    train::Model model(ctx, models::gpt_graph(c), fmt, 1, 1, false, false);
    train::Evaluator window(ctx, model, train::LossKind::SoftmaxXent, 1);
    models::GptDecoder decoder(ctx, c, fmt, model.working(), model.tensors());
    std::vector<double> cached_ms, window_ms;
    for (int r = 0; r <= repeats; ++r) {  // run 0 warms up (pipelines, allocations)
      auto t0 = std::chrono::steady_clock::now();
      decoder.reset();
      for (uint32_t p = 0; p < c.block_size; ++p) decoder.append(ids[p]);
      const double cached = seconds_since(t0);
      t0 = std::chrono::steady_clock::now();
      std::vector<float> x(c.block_size, 0.0f);
      for (uint32_t p = 0; p < c.block_size; ++p) {
        x[p] = float(ids[p]);
        window.predict(x, 1);
      }
      const double full = seconds_since(t0);
      if (r == 0) continue;
      cached_ms.push_back(1e3 * cached / c.block_size);
      window_ms.push_back(1e3 * full / c.block_size);
    }
    const double a = median(cached_ms), b = median(window_ms);
    std::printf("%-6s %14.3f %14.3f %9.2fx\n", format_name(fmt), a, b, b / a);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace vkamp::bench
