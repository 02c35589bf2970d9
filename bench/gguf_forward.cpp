// gguf-forward-bench FILE.gguf TOKENS BATCH RUNS SEED: vkamp's forward pass
// over a GGUF model, its weights kept in the file's blocks as
// vkamp-finetune --model FILE.gguf holds them (bench/gguf_vs_llamacpp.sh
// holds it against llama.cpp's prompt processing). BATCH sequences of
// TOKENS random ids, one forward pass with the logits and the loss at
// every position (the validation loss of vkamp-finetune --max-steps 0),
// one warm-up pass and RUNS timed ones. The run's format is fp16, the
// fine-tune's default; the graph carries LoRA r 1 on q_proj alone (a GGUF
// base trains adapters only), whose products are a rounding error beside
// the base's. Prints "pass SECONDS OUTPUTS" per timed pass (OUTPUTS: the
// positions with logits, all of them), on the host clock
// (the token ids in, the loss read back).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "app/finetune_job.hpp"
#include "app/run_options.hpp"
#include "bench_util.hpp"
#include "vkamp/context.hpp"
#include "vkamp/train/trainer.hpp"

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: gguf-forward-bench FILE.gguf TOKENS BATCH RUNS SEED\n");
    return 2;
  }
  try {
    const uint32_t tokens = uint32_t(std::atoi(argv[2])), batch = uint32_t(std::atoi(argv[3]));
    const int runs = std::atoi(argv[4]);
    vkamp::app::RunOptions cfg = vkamp::app::finetune_defaults(0, nullptr);
    cfg.ft.model_dir = argv[1];
    cfg.ft.seq_len = tokens;
    cfg.ft.lora_rank = 1;
    cfg.ft.lora_targets = {"q_proj"};
    cfg.ft.evaluate_only = true;
    cfg.batch = batch;
    const vkamp::app::FineTuneSource source = vkamp::app::finetune_source(cfg.ft);

    std::mt19937_64 gen(std::strtoull(argv[5], nullptr, 10));
    std::uniform_int_distribution<uint32_t> id(0, source.config.vocab_size - 1);
    std::vector<uint32_t> ids(size_t(tokens) * batch + 1);
    for (uint32_t& t : ids) t = id(gen);
    const vkamp::data::HostData data = vkamp::data::HostData::windows(ids, tokens, tokens);

    vkamp::Context ctx(vkamp::bench::bench_context_options(""));
    vkamp::train::Trainer trainer(ctx, cfg, vkamp::app::finetune_graph(cfg.ft, source),
                                  vkamp::train::LossKind::SoftmaxXent, data);
    vkamp::app::load_finetune_weights(cfg.ft, source, trainer.model());
    std::printf("device %s\n", ctx.info().name.c_str());
    for (int pass = 0; pass <= runs; ++pass) {
      const auto t0 = std::chrono::steady_clock::now();
      const double loss = trainer.mean_loss(data);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (pass == 0) std::printf("loss %.4f\n", loss);  // pass 0 warms up (pipelines)
      else std::printf("pass %.6f %u\n", s, tokens * batch);
      std::fflush(stdout);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gguf-forward-bench: %s\n", e.what());
    return 2;
  }
}
