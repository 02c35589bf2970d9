// The fine-tuning run vkamp-finetune and llama_tiny share (finetune.hpp).
#include "finetune.hpp"

#include <cstdio>
#include <cstring>
#include <optional>
#include <random>

#include "app/finetune_data.hpp"
#include "sample_main.hpp"
#include "vkamp/config_error.hpp"
#include "vkamp/data/data_error.hpp"
#include "vkamp/error.hpp"
#include "vkamp/models/hf_checkpoint.hpp"
#include "vkamp/models/llama_presets.hpp"
#include "vkamp/models/peft_adapter.hpp"
#include "vkamp/text/tokenizer.hpp"
#include "vkamp/train/hf_weights.hpp"

namespace vkamp::samples {

namespace {

struct Source {
  models::LlamaConfig config;
  std::string name;  // the folder as given, or the preset's name
};

Source model_source(const app::FineTuneOptions& o) {
  if (!o.model_dir.empty() && !o.synthetic.empty())
    throw ConfigError("--model and --synthetic both given: fine-tune a folder, or plan a preset shape");
  if (!o.synthetic.empty()) return {*models::llama_preset(o.synthetic), o.synthetic};
  if (o.model_dir.empty()) throw ConfigError("--model DIR is required (a Hugging Face model folder), or --synthetic NAME");
  return {models::read_hf_config(o.model_dir), o.model_dir};
}

// The packed sequences: from --data through the folder's tokenizer, or (a
// --synthetic plan of memory and speed) random tokens, 16 batches of them.
struct Sequences {
  data::HostData train, val;
  std::string what;
};

Sequences sequences(const app::RunOptions& cfg, const models::LlamaConfig& c) {
  const app::FineTuneOptions& o = cfg.ft;
  if (o.data_path.empty()) {
    if (o.synthetic.empty()) throw ConfigError("--data FILE is required (plain text, or JSON Lines of {\"text\": ...})");
    std::mt19937_64 gen(cfg.seed);
    std::uniform_int_distribution<uint32_t> id(0, c.vocab_size - 1);
    std::vector<uint32_t> tokens(size_t(o.seq_len) * 16 * std::max(1u, cfg.batch) + 1);
    for (uint32_t& t : tokens) t = id(gen);
    data::HostData d = data::HostData::windows(tokens, o.seq_len, o.seq_len);
    return {d, d, "random tokens (--synthetic: a plan of memory and speed)"};
  }
  if (o.model_dir.empty()) throw ConfigError("--data needs the model's tokenizer: give --model DIR, not --synthetic");
  const text::Tokenizer tok = text::Tokenizer::load(o.model_dir);
  app::FineTuneText t = app::load_finetune_text(o.data_path, tok, o.val_fraction, o.seq_len);
  for (const std::vector<uint32_t>* part : {&t.train, &t.val})
    for (uint32_t id : *part)
      if (id >= c.vocab_size)
        throw data::DataError(o.model_dir + ": the tokenizer gives id " + std::to_string(id) +
                              ", past the model's vocab_size " + std::to_string(c.vocab_size));
  char what[160];
  std::snprintf(what, sizeof what, "%s: %zu documents, %zu + %zu tokens", o.data_path.c_str(), t.documents,
                t.train.size(), t.val.size());
  return {data::HostData::windows(std::move(t.train), o.seq_len, o.seq_len),
          data::HostData::windows(std::move(t.val), o.seq_len, o.seq_len), what};
}

// A trained tensor's fp32 master values; nullopt for a frozen one.
std::optional<std::vector<float>> master_values(const train::Model& m, const std::vector<float>& master,
                                                const std::string& name) {
  for (const graph::ParamTensor& t : m.tensors())
    if (t.name == name) return std::vector<float>(master.begin() + t.offset, master.begin() + t.offset + t.size);
  return std::nullopt;
}

// A base tensor as the run leaves it: trained (its master), or frozen with
// its adapters folded in (W + alpha/r B A, summed in double), as PEFT's
// merge_and_unload computes it.
std::vector<float> merged_tensor(const train::Model& m, const std::vector<float>& master, const models::LoraConfig& lora,
                                 const std::string& name) {
  if (auto v = master_values(m, master, name)) return *v;
  std::vector<float> w = m.frozen().read(name);
  const std::string stem = name.size() > 7 ? name.substr(0, name.size() - 7) : name;  // less ".weight"
  const auto a = master_values(m, master, stem + ".lora_A.weight"), b = master_values(m, master, stem + ".lora_B.weight");
  if (a && b && lora.rank) models::fold_adapter(w, *a, *b, lora);
  return w;
}

}  // namespace

int finetune(app::RunOptions& cfg, Context& ctx, const char* name) {
  const app::FineTuneOptions& o = cfg.ft;
  const Source source = model_source(o);
  const bool trains = !cfg.dry_run && !o.evaluate_only;
  if (trains && o.out_dir.empty() && o.synthetic.empty())
    throw ConfigError("--out DIR is required: where the adapters are written");
  if (!o.merge_dir.empty() && o.lora_rank == 0)
    throw ConfigError("--merge DIR: with --lora-rank 0 there is nothing to merge (--out gets the whole model)");
  if (trains && o.model_dir.empty() && (!o.merge_dir.empty() || (o.lora_rank == 0 && !o.out_dir.empty())))
    throw ConfigError("writing a model folder needs the base folder's config and tokenizer: give --model DIR");
  models::LoraConfig lora;
  lora.rank = o.lora_rank;
  lora.alpha = o.lora_alpha;
  lora.targets = o.lora_targets;
  lora.dropout = o.lora_dropout;
  Sequences data = sequences(cfg, source.config);
  train::Trainer trainer(ctx, cfg, models::llama_graph(source.config, o.seq_len, lora), train::LossKind::SoftmaxXent,
                         data.train);
  train::Model& model = trainer.model();
  if (!o.model_dir.empty()) train::load_hf_weights(o.model_dir, model);
  if (!cfg.quiet)
    std::printf("%s: %s (%s, %u layers, %u heads, %u key/value heads, hidden %u): %llu frozen, %llu "
                "trained parameters (%s); %s; %u train / %u validation sequences of %u; batch %u, %u steps, %s\n",
                name, source.name.c_str(), source.config.architecture.c_str(), source.config.num_hidden_layers,
                source.config.num_attention_heads, source.config.num_key_value_heads, source.config.hidden_size,
                static_cast<unsigned long long>(model.frozen().count()),
                static_cast<unsigned long long>(model.param_count()),
                lora.rank ? ("LoRA r " + std::to_string(lora.rank)).c_str() : "full fine-tuning", data.what.c_str(),
                data.train.count, data.val.count, o.seq_len, cfg.batch, trainer.budget(),
                samples::describe_run(cfg).c_str());
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
  if (o.out_dir.empty()) return 0;  // --synthetic without --out: a plan, nothing to keep
  const std::vector<float> master = model.read_master();
  const io::DType dtype = cfg.precision == Format::F16    ? io::DType::F16
                          : cfg.precision == Format::BF16 ? io::DType::BF16
                                                          : io::DType::F32;
  const graph::Graph plain = models::llama_graph(source.config, o.seq_len);
  auto merged = [&](const std::string& t) { return merged_tensor(model, master, lora, t); };
  if (lora.rank == 0) {
    models::write_hf_folder(o.out_dir, o.model_dir, plain, dtype, merged);
    std::printf("wrote the fine-tuned model folder %s (model.safetensors, config.json, tokenizer)\n", o.out_dir.c_str());
    return 0;
  }
  models::write_peft_adapter(o.out_dir, model.graph(), lora, source.name,
                             [&](const std::string& adapter) { return *master_values(model, master, adapter); });
  std::printf("wrote %s/adapter_model.safetensors and adapter_config.json (PEFT's layout)\n", o.out_dir.c_str());
  if (!o.merge_dir.empty()) {
    models::write_hf_folder(o.merge_dir, o.model_dir, plain, dtype, merged);
    std::printf("wrote the merged model folder %s (each adapted weight W + alpha/r B A)\n", o.merge_dir.c_str());
  }
  return 0;
}

bool asks_no_steps(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--max-steps=0") == 0) return true;
    if (std::strcmp(argv[i], "--max-steps") == 0 && i + 1 < argc && std::strcmp(argv[i + 1], "0") == 0) return true;
  }
  return false;
}

app::RunOptions finetune_defaults(int argc, char** argv) {
  app::RunOptions d;
  d.precision = Format::F16;
  d.scaler.mode = config::LossScaleMode::Dynamic;
  d.optimizer.kind = config::OptimizerKind::AdamW;
  d.optimizer.lr = 2e-4;
  d.optimizer.weight_decay = 0;
  d.clip.max_norm = 1.0;
  d.batch = 4;
  d.epochs = 1;
  d.ft.evaluate_only = asks_no_steps(argc, argv);
  return d;
}

}  // namespace vkamp::samples
