// charlm: a character-level GPT (nanoGPT's architecture, models/gpt.hpp)
// trained on the text of Debian's fortunes package, or --text FILE, in fp16
// with dynamic loss scaling by default. Prints the training and validation
// loss at every evaluation, then a sample of generated text. The job's data
// and recipe are in app/workloads.cpp and app/charlm.hpp, shared
// with vkamp-studio.
#include <cstdio>

#include "app/charlm.hpp"
#include "app/saved_gpt.hpp"
#include "app/workloads.hpp"
#include "sample_main.hpp"
#include "vkamp/config_error.hpp"
#include "vkamp/platform.hpp"

namespace {

using namespace vkamp;

void print_sample(const app::RunOptions& cfg, const std::string& text) {
  std::printf("--- sample: %u characters, temperature %g, top-k %u, seed %llu ---\n%s\n---\n", cfg.lm.generate,
              cfg.lm.temperature, cfg.lm.top_k, static_cast<unsigned long long>(cfg.seed), text.c_str());
}

// --generate-only: the saved model's text, as vkamp-generate writes it.
int generate_only(const app::RunOptions& cfg, Context& ctx) {
  if (cfg.init_from.empty())
    throw vkamp::ConfigError("--generate-only samples from a saved GPT: give --init-from FILE (from charlm --save)");
  app::SavedGpt gpt(ctx, cfg.init_from, cfg.precision);
  print_sample(cfg, gpt.generate(cfg.lm, cfg.seed));
  return 0;
}

int run(app::RunOptions& cfg, Context& ctx) {
  if (cfg.lm.generate_only) return generate_only(cfg, ctx);
  const app::Workload& job = app::find_workload("charlm");
  app::Datasets data = job.load(cfg);
  const models::GptConfig gpt = app::gpt_config(cfg.lm, uint32_t(data.vocab.size()));
  app::prompt_ids(data.vocab, cfg.lm);  // a bad --prompt fails now, not after training
  train::Trainer trainer(ctx, cfg, app::job_model(job, cfg, data).graph, job.loss, data.train);
  samples::init_weights_from_file(cfg, trainer);
  if (!cfg.quiet)
    std::printf("charlm: GPT with %u layers, %u heads, %u channels, block %u (%llu parameters); %s: %u characters "
                "(vocabulary %zu), %u train / %u validation windows; batch %u, %u steps, %s\n",
                gpt.n_layer, gpt.n_head, gpt.n_embd, gpt.block_size,
                static_cast<unsigned long long>(trainer.model().param_count()),
                (cfg.lm.text_path.empty() ? app::fortunes_dir() : cfg.lm.text_path).c_str(),
                uint32_t(data.train.tokens.size() + data.test.tokens.size()), data.vocab.size(), data.train.count,
                data.test.count, cfg.batch, trainer.budget(), samples::describe_run(cfg).c_str());
  if (cfg.dry_run) return samples::report_dry_run("charlm", trainer);

  // The validation loss every --eval-every steps, with the weights of that
  // step (the trainer drains the steps before it), on the run's shared
  // per-evaluation line (samples/sample_main.hpp).
  trainer.set_held_out(data.test);
  app::RunHistory history;
  history.eval_name = "val loss";
  const samples::RunResult s = samples::train_with_progress(trainer, cfg, "charlm", {}, &history);
  if (s.failed) {
    samples::write_report(cfg, history);
    return samples::report_failure("charlm", cfg, s);
  }
  if (s.suggested) return 0;  // --loss-scale suggest: the suggestion is the result
  // The trained weights over the whole validation set, unless the last
  // step was an evaluation point that read all of it (no --eval-iters).
  const train::Trainer::HeldOut trained = app::final_held_out(trainer, s, data.test);
  if (!history.evals.empty() && history.evals.back().step == s.steps) history.evals.pop_back();  // maybe a sampled one
  history.evals.push_back({s.steps, trained.value, 0, trained.metric});
  const double val_loss = trained.value;
  std::printf("validation loss %.4f nats per character after %u steps\n", val_loss, s.applied);
  samples::print_run_report(cfg, trainer, s);
  if (cfg.lm.generate) {
    print_sample(cfg, app::generate_text(trainer, gpt, data.vocab, cfg.lm, cfg.seed));
  }
  samples::write_report(cfg, history);
  if (!cfg.save_path.empty())
    samples::save_weights(cfg, trainer, s, app::charlm_save_metadata(trainer, gpt, data.vocab, data.test, cfg, s, val_loss));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  vkamp::platform::utf8_arguments(argc, argv);
  const vkamp::app::Workload& job = vkamp::app::find_workload("charlm");
  return vkamp::samples::sample_main(
      {"charlm",
       "Trains a character-level GPT (nanoGPT's architecture: pre-LayerNorm blocks,\n"
       "learned positions, lm_head tied to the token embedding) on the text of\n"
       "Debian's fortunes package, or --text FILE: the first 90% trains, the last 10%\n"
       "validates. AdamW with weight decay on matrices, warmup then cosine, clipping\n"
       "at 1.0, in fp16 with dynamic loss scaling unless told otherwise. Prints the\n"
       "training and validation loss (nats per character) every --eval-every steps,\n"
       "then a sample of generated text. --save writes nanoGPT's names and layouts\n"
       "(tests/golden/check_charlm_export.py reads it into PyTorch).",
       vkamp::app::Rows::LanguageModel},
      job.defaults, argc, argv, run);
}
