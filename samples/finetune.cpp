// The fine-tuning run vkamp-finetune and llama_tiny share (finetune.hpp):
// the job's pieces (app/finetune_job.hpp) with the validation loss printed
// before and after.
#include "finetune.hpp"

#include <chrono>
#include <cstdio>
#include <map>
#include <string>

#include "app/finetune_job.hpp"
#include "app/finetune_memory.hpp"
#include "app/run_length.hpp"
#include "sample_main.hpp"
#include "vkamp/train/hf_weights.hpp"
#include "vkamp/train/memory_budget.hpp"

namespace vkamp::samples {

namespace {

// What the frozen base is held in: the run's format, or blocks too (and
// which matrices --quantize could not hold: rows of partial blocks).
std::string quant_text(const app::RunOptions& cfg, const train::Model& model) {
  std::map<std::string, uint64_t> blocks;
  std::map<std::string, uint32_t> fallbacks;  // --quantize: matrices in another type, by type
  const std::optional<quant::GgmlType> asked = app::finetune_quantize_type(cfg.ft);
  const std::string asked_name = asked ? quant::ggml_type_info(*asked).name : "";
  uint32_t unquantized = 0;
  for (const graph::FrozenTensor& t : model.frozen().tensors()) {
    if (t.blocks) {
      const std::string type = quant::ggml_type_info(*t.blocks).name;
      blocks[type] += t.bytes;
      if (asked && *t.blocks != *asked) ++fallbacks[type];
    } else if (model.graph().tensor(t.name).dims.size() == 2) {
      ++unquantized;
    }
  }
  std::string s = format_name(cfg.precision);
  for (const auto& [type, bytes] : blocks) s += ", " + type + " blocks (" + train::mib_text(bytes, 1) + " MiB, kept quantized)";
  for (const auto& [type, n] : fallbacks)
    s += "; " + std::to_string(n) + " matrices in " + type + ": their rows are not whole " + asked_name +
         " blocks (llama.cpp's quantizer falls back the same way)";
  if (asked && unquantized)
    s += "; " + std::to_string(unquantized) + " matrices stay " + format_name(cfg.precision) + ": their rows are not whole " +
         asked_name + " blocks";
  return s;
}

}  // namespace

int finetune(app::RunOptions& cfg, Context& ctx, const char* name) {
  const app::FineTuneOptions& o = cfg.ft;
  const app::FineTuneSource source = app::finetune_source(o);
  app::check_finetune_outputs(cfg);
  const models::LoraConfig lora = app::lora_config(o);
  app::FineTuneSequences data = app::finetune_sequences(cfg, source.config);
  try {
    app::check_finetune_memory(ctx, cfg, source);  // before anything is allocated
  } catch (const train::MemoryPlanError& e) {
    if (!cfg.dry_run) throw;
    std::printf("%s: --dry-run: planned, not allocated: %s\n", name, e.what());
    return 2;
  }
  train::Trainer trainer(ctx, cfg, app::finetune_graph(o, source), train::LossKind::SoftmaxXent, data.train);
  train::Model& model = trainer.model();
  if (!o.model_dir.empty()) {
    const auto start = std::chrono::steady_clock::now();
    const uint64_t bytes = app::load_finetune_weights(o, source, model);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!cfg.quiet)
      std::printf("%s: loaded %.1f MiB of weights in %.2f s (%.0f MiB/s), converted to %s on the way\n", name,
                  double(bytes) / (1 << 20), s, s > 0 ? double(bytes) / (1 << 20) / s : 0.0,
                  quant_text(cfg, model).c_str());
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
