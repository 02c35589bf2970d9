// The fine-tuning run vkamp-finetune and llama_tiny share (finetune.hpp):
// the job's pieces (app/finetune_job.hpp) with the validation loss printed
// before and after.
#include "finetune.hpp"

#include <chrono>
#include <cstdio>

#include "app/finetune_job.hpp"
#include "app/finetune_memory.hpp"
#include "app/run_length.hpp"
#include "sample_main.hpp"
#include "vkamp/train/hf_weights.hpp"
#include "vkamp/train/memory_budget.hpp"

namespace vkamp::samples {

int finetune(app::RunOptions& cfg, Context& ctx, const char* name) {
  const app::FineTuneOptions& o = cfg.ft;
  const app::FineTuneSource source = app::finetune_source(o);
  app::check_finetune_outputs(cfg);
  const models::LoraConfig lora = app::lora_config(o);
  app::FineTuneSequences data = app::finetune_sequences(cfg, source.config);
  try {
    app::check_finetune_memory(ctx, cfg, source.config);  // before anything is allocated
  } catch (const train::MemoryPlanError& e) {
    if (!cfg.dry_run) throw;
    std::printf("%s: --dry-run: planned, not allocated: %s\n", name, e.what());
    return 2;
  }
  train::Trainer trainer(ctx, cfg, models::llama_graph(source.config, o.seq_len, lora), train::LossKind::SoftmaxXent,
                         data.train);
  train::Model& model = trainer.model();
  if (!o.model_dir.empty()) {
    const auto start = std::chrono::steady_clock::now();
    const uint64_t bytes = train::load_hf_weights(o.model_dir, model);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!cfg.quiet)
      std::printf("%s: loaded %.1f MiB of weights in %.2f s (%.0f MiB/s), converted to %s on the way\n", name,
                  double(bytes) / (1 << 20), s, s > 0 ? double(bytes) / (1 << 20) / s : 0.0, format_name(cfg.precision));
  }
  if (!cfg.quiet)
    std::printf("%s: %s (%s, %u layers, %u heads, %u key/value heads, hidden %u): %llu frozen, %llu "
                "trained parameters (%s); %s; %u train / %u validation sequences of %u; batch %u, %s, %s\n",
                name, source.name.c_str(), source.config.architecture.c_str(), source.config.num_hidden_layers,
                source.config.num_attention_heads, source.config.num_key_value_heads, source.config.hidden_size,
                static_cast<unsigned long long>(model.frozen().count()),
                static_cast<unsigned long long>(model.param_count()),
                lora.rank ? ("LoRA r " + std::to_string(lora.rank)).c_str() : "full fine-tuning", data.what.c_str(),
                data.train.count, data.val.count, o.seq_len, cfg.batch, app::run_length_text(trainer).c_str(),
                samples::describe_run(cfg).c_str());
  if (!cfg.quiet && !data.sample.empty()) std::printf("%s: %s\n", name, data.sample.c_str());
  if (cfg.dry_run) return samples::report_dry_run(name, trainer);

  const double before = trainer.held_out(data.val).loss;
  std::printf(cfg.resume ? "validation loss %.4f of the base, before the checkpoint's adapters\n"
                                    : "validation loss %.4f before fine-tuning\n",
              before);
  if (o.evaluate_only) return 0;
  trainer.set_held_out(data.val);
  app::RunHistory history;
  history.eval_name = "val loss";
  const samples::RunResult s = samples::train_with_progress(trainer, cfg, name, {}, &history);
  if (s.failed) {
    samples::write_report(cfg, history);
    return samples::report_failure(name, cfg, s);
  }
  if (s.suggested) return 0;
  const double after = trainer.held_out(data.val).loss;
  std::printf("validation loss %.4f after %u steps (%.4f before)\n", after, s.applied, before);
  samples::print_run_report(cfg, trainer, s);
  samples::write_report(cfg, history);
  std::fputs(app::write_finetune_outputs(cfg, source, trainer, s).c_str(), stdout);
  return 0;
}

}  // namespace vkamp::samples
