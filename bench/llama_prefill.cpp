// llama-prefill-bench MODEL TOKENS RUNS SEED: vkamp-generate's prompt
// processing (models::LlamaDecoder::prefill) on a Llama-family GGUF file or
// Hugging Face folder, loaded as vkamp-generate loads it (fp16, a GGUF
// file's quantized matrices in its blocks). TOKENS random ids through the
// model at once from an empty cache, the logits of the last position read
// back: what llama.cpp's prompt processing (llama-bench's pp) does, which
// bench/gguf_vs_llamacpp.sh --vkamp prefill holds it against. One warm-up
// pass (pipelines), then RUNS timed ones. Prints "pass SECONDS OUTPUTS" per
// timed pass (OUTPUTS: the positions with logits, one), on the host clock
// (the ids in, the logits read back).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/llama_generate.hpp"
#include "bench_util.hpp"
#include "vkamp/context.hpp"
#include "vkamp/models/llama_decoder.hpp"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: llama-prefill-bench MODEL TOKENS RUNS SEED\n");
    return 2;
  }
  try {
    const uint32_t tokens = uint32_t(std::atoi(argv[2]));
    const int runs = std::atoi(argv[3]);
    if (tokens < 2 || runs < 1) throw std::runtime_error("TOKENS from 2 and RUNS from 1");
    vkamp::Context ctx(vkamp::bench::bench_context_options(""));
    const vkamp::Format fmt = vkamp::Format::F16;
    const vkamp::app::FrozenLlama frozen = vkamp::app::load_frozen_llama(ctx, argv[1], "", fmt, 1);
    vkamp::models::LlamaDecoder decoder(ctx, frozen.config, fmt,
                                        vkamp::models::LlamaDecoder::frozen_weights(frozen.model->frozen()), tokens);
    std::mt19937_64 gen(std::strtoull(argv[4], nullptr, 10));
    std::uniform_int_distribution<uint32_t> id(0, frozen.config.vocab_size - 1);
    std::vector<uint32_t> ids(tokens);
    std::printf("device %s\n", ctx.info().name.c_str());
    for (int pass = 0; pass <= runs; ++pass) {  // pass 0 warms up (pipelines)
      for (uint32_t& t : ids) t = id(gen);
      decoder.reset();
      const auto t0 = std::chrono::steady_clock::now();
      const std::vector<float> logits = decoder.prefill(ids);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (pass > 0) std::printf("pass %.6f 1\n", s);
      std::fflush(stdout);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "llama-prefill-bench: %s\n", e.what());
    return 2;
  }
}
