#include "app/finetune_job.hpp"

#include <cstdio>
#include <cstring>
#include <optional>
#include <random>

#include "app/epoch_watch.hpp"
#include "app/finetune_data.hpp"
#include "vkamp/config_error.hpp"
#include "vkamp/models/gguf_adapter.hpp"
#include "vkamp/models/gguf_merge.hpp"
#include "vkamp/models/gguf_model.hpp"
#include "vkamp/models/hf_checkpoint.hpp"
#include "vkamp/models/llama_presets.hpp"
#include "vkamp/models/peft_adapter.hpp"
#include "vkamp/text/chat_tokens.hpp"
#include "vkamp/text/tokenizer.hpp"
#include "vkamp/train/hf_weights.hpp"

namespace vkamp::app {

namespace {

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

FineTuneSource finetune_source(const FineTuneOptions& o) {
  if (!o.model_dir.empty() && !o.synthetic.empty())
    throw ConfigError("--model and --synthetic both given: fine-tune a folder, or plan a preset shape");
  if (!o.synthetic.empty()) return {*models::llama_preset(o.synthetic), o.synthetic};
  if (o.model_dir.empty())
    throw ConfigError("--model DIR|FILE.gguf is required (a Hugging Face model folder or a GGUF file), or --synthetic NAME");
  if (io::is_gguf_path(o.model_dir)) {
    std::shared_ptr<const io::GgufFile> f;
    try {
      f = std::make_shared<const io::GgufFile>(io::GgufFile::open(o.model_dir));
    } catch (const io::FormatError& e) {
      throw ConfigError(e.what());
    }
    return {models::read_gguf_config(*f), o.model_dir, f};
  }
  return {models::read_hf_config(o.model_dir), o.model_dir};
}

graph::Graph finetune_graph(const FineTuneOptions& o, const FineTuneSource& source) {
  graph::Graph g = models::llama_graph(source.config, o.seq_len, lora_config(o));
  if (source.gguf) {
    if (!o.quantize.empty())
      throw ConfigError("--quantize " + o.quantize + " with a GGUF file: its weights keep the file's own types");
    models::hold_gguf_blocks(g, *source.gguf);
  } else if (const std::optional<quant::GgmlType> t = finetune_quantize_type(o)) {
    models::hold_frozen_in_blocks(g, *t);
  }
  return g;
}

std::optional<quant::GgmlType> finetune_quantize_type(const FineTuneOptions& o) {
  if (o.quantize.empty()) return std::nullopt;
  const std::optional<quant::GgmlType> t = quant::ggml_type_from_name(o.quantize);
  if (!t || !quant::is_quantized(*t))
    throw ConfigError("--quantize " + o.quantize + ": not a block type vkamp holds (q8_0, q4_0, q4_1, q5_0, q5_1, "
                      "q4_k, q5_k, q6_k)");
  if (o.lora_rank == 0) throw ConfigError("--quantize needs a frozen base: LoRA (--lora-rank above 0)");
  return t;
}

uint64_t load_finetune_weights(const FineTuneOptions& o, const FineTuneSource& source, train::Model& model) {
  if (source.gguf) return train::load_gguf_weights(*source.gguf, model);
  return train::load_hf_weights(o.model_dir, model);
}

models::LoraConfig lora_config(const FineTuneOptions& o) {
  models::LoraConfig lora;
  lora.rank = o.lora_rank;
  lora.alpha = o.lora_alpha;
  lora.targets = o.lora_targets;
  lora.dropout = o.lora_dropout;
  return lora;
}

void check_finetune_outputs(const RunOptions& cfg) {
  const FineTuneOptions& o = cfg.ft;
  finetune_quantize_type(o);
  const bool trains = !cfg.dry_run && !o.evaluate_only;
  if (trains && o.out_dir.empty() && o.synthetic.empty())
    throw ConfigError("--out DIR is required: where the adapters are written");
  if (!o.merge_dir.empty() && o.lora_rank == 0)
    throw ConfigError("--merge DIR: with --lora-rank 0 there is nothing to merge (--out gets the whole model)");
  if (!o.merge_dir.empty() && io::is_gguf_path(o.merge_dir) != io::is_gguf_path(o.model_dir))
    throw ConfigError("--merge " + o.merge_dir + ": a GGUF base (--model FILE.gguf) merges into a GGUF file (--merge "
                      "FILE.gguf), a model folder into a folder");
  if (o.merge_type != "f16" && o.merge_type != "base")
    throw ConfigError("--merge-type " + o.merge_type + ": f16 or base");
  if (o.merge_type != "f16" && !io::is_gguf_path(o.merge_dir))
    throw ConfigError("--merge-type " + o.merge_type + " goes with --merge FILE.gguf");
  if (trains && io::is_gguf_path(o.model_dir) && o.lora_rank == 0)
    throw ConfigError("a GGUF base trains LoRA adapters only: --lora-rank 0 writes a Hugging Face folder, which needs "
                      "the base's config.json and tokenizer files");
  if (trains && o.model_dir.empty() && (!o.merge_dir.empty() || (o.lora_rank == 0 && !o.out_dir.empty())))
    throw ConfigError("writing a model folder needs the base folder's config and tokenizer: give --model DIR");
}

FineTuneSequences finetune_sequences(const RunOptions& cfg, const models::LlamaConfig& c) {
  const FineTuneOptions& o = cfg.ft;
  if (o.data_path.empty()) {
    if (o.synthetic.empty())
      throw ConfigError("--data FILE is required (plain text, or JSON Lines of {\"text\": ...}, {\"prompt\", \"completion\"} or {\"messages\": [...]})");
    std::mt19937_64 gen(cfg.seed);
    std::uniform_int_distribution<uint32_t> id(0, c.vocab_size - 1);
    std::vector<uint32_t> tokens(size_t(o.seq_len) * 16 * std::max(1u, cfg.batch) + 1);
    for (uint32_t& t : tokens) t = id(gen);
    // Validated on one batch of them: a plan's evaluation before and after
    // need not cost more than a step each.
    const std::vector<uint32_t> one_batch(tokens.begin(), tokens.begin() + size_t(o.seq_len) * std::max(1u, cfg.batch) + 1);
    return {data::HostData::windows(tokens, o.seq_len, o.seq_len), data::HostData::windows(one_batch, o.seq_len, o.seq_len),
            "random tokens (--synthetic: a plan of memory and speed)"};
  }
  if (o.model_dir.empty()) throw ConfigError("--data needs the model's tokenizer: give --model DIR|FILE.gguf, not --synthetic");
  const FineTuneSource source = finetune_source(o);
  const text::Tokenizer tok = source.gguf ? text::Tokenizer::from_gguf(*source.gguf) : text::Tokenizer::load(o.model_dir);
  models::check_tokenizer_fits(c, tok.vocab_size(), o.model_dir);
  // The chat template, read now and used where the data has "messages" (a
  // template that cannot be read matters only then, unless named by --chat-template).
  std::optional<text::ModelChat> model_chat;
  ChatData chat;
  chat.model = o.model_dir;
  chat.train_on_all = o.train_on_all;
  try {
    model_chat = text::load_model_chat(o.model_dir, o.chat_template);
    if (model_chat) chat.chat = &*model_chat;
  } catch (const text::ChatTemplateError& e) {
    if (!o.chat_template.empty()) throw;
    chat.template_error = e.what();
  }
  FineTuneText t = load_finetune_text(o.data_path, tok, o.val_fraction, o.seq_len, chat);
  std::string what = o.data_path + ": " + std::to_string(t.documents) + " documents, " + std::to_string(t.train.size()) +
                     " + " + std::to_string(t.val.size()) + " tokens";
  if (t.targets + 1 < t.train.size() + t.val.size())  // prompts: how much of the text the loss sees
    what += ", " + std::to_string(t.targets) + (t.conversations ? " of them targets" : " of them completion targets");
  if (t.conversations) what += ", " + std::to_string(t.conversations) + " conversations";
  return {data::HostData::windows(std::move(t.train), o.seq_len, o.seq_len),
          data::HostData::windows(std::move(t.val), o.seq_len, o.seq_len), what, t.sample};
}

std::string write_finetune_outputs(const RunOptions& cfg, const FineTuneSource& source, const train::Trainer& trainer,
                                   const RunResult& run) {
  const FineTuneOptions& o = cfg.ft;
  // --synthetic without --out is a plan, --max-steps 0 an evaluation: nothing to keep.
  if (o.out_dir.empty() || o.evaluate_only) return "";
  const train::Model& model = trainer.model();
  const models::LoraConfig lora = lora_config(o);
  const bool best = cfg.save_best && run.best && !run.best_weights.empty();
  const std::vector<float> master = best ? run.best_weights : model.read_master();
  const io::DType dtype = cfg.precision == Format::F16    ? io::DType::F16
                          : cfg.precision == Format::BF16 ? io::DType::BF16
                                                          : io::DType::F32;
  const graph::Graph plain = models::llama_graph(source.config, o.seq_len);
  auto merged = [&](const std::string& t) { return merged_tensor(model, master, lora, t); };
  if (lora.rank == 0) {
    models::write_hf_folder(o.out_dir, o.model_dir, plain, dtype, merged);
    return "wrote the fine-tuned model folder " + o.out_dir + " (model.safetensors, config.json, tokenizer)\n";
  }
  models::write_peft_adapter(o.out_dir, model.graph(), lora, source.name,
                             [&](const std::string& adapter) { return *master_values(model, master, adapter); });
  std::string said = "wrote " + o.out_dir + "/adapter_model.safetensors and adapter_config.json (PEFT's layout" +
                     (best ? "; --save-best: the adapters of " + app::held_out_text(run.best->metric, run.best->value) + ")\n"
                           : ")\n");
  if (source.gguf) {  // llama.cpp's and Ollama's form too
    models::write_gguf_adapter(o.out_dir + "/adapter.gguf", model.graph(), lora, source.config,
                               [&](const std::string& adapter) { return *master_values(model, master, adapter); });
    said += "wrote " + o.out_dir + "/adapter.gguf (llama.cpp's --lora, Ollama's ADAPTER)\n";
  }
  if (!o.merge_dir.empty() && source.gguf) {
    const bool base_types = o.merge_type == "base";
    models::write_merged_gguf(
        o.merge_dir, *source.gguf, model.graph(), lora,
        [&](const std::string& adapter) { return *master_values(model, master, adapter); },
        base_types ? models::MergedTypes::Base : models::MergedTypes::F16);
    said += "wrote the merged model " + o.merge_dir + (base_types ? " (GGUF in the base's types" : " (F16 GGUF") +
            ", each adapted weight W + alpha/r B A)\n";
  } else if (!o.merge_dir.empty()) {
    models::write_hf_folder(o.merge_dir, o.model_dir, plain, dtype, merged);
    said += "wrote the merged model folder " + o.merge_dir + " (each adapted weight W + alpha/r B A)\n";
  }
  return said;
}

Workload finetune_workload(const RunOptions& cfg) {
  Workload w;
  w.name = "vkamp-finetune";
  w.about = "LoRA fine-tuning of a Llama-family Hugging Face model (--model DIR --data FILE)";
  w.loss = train::LossKind::SoftmaxXent;
  w.defaults = cfg;
  w.eval_name = "val loss";
  w.load = [](const RunOptions& o) {
    check_finetune_outputs(o);
    FineTuneSequences s = finetune_sequences(o, finetune_source(o.ft).config);
    Datasets d;
    d.train = std::move(s.train);
    d.test = std::move(s.val);
    d.sample = std::move(s.sample);
    return d;
  };
  w.graph = [](const RunOptions& o, const Datasets&) { return finetune_graph(o.ft, finetune_source(o.ft)); };
  w.prepare = [](const RunOptions& o, train::Trainer& t) {
    if (!o.ft.model_dir.empty()) load_finetune_weights(o.ft, finetune_source(o.ft), t.model());
  };
  w.finish = [](const RunOptions& o, const train::Trainer& t, const RunResult& run) {
    return write_finetune_outputs(o, finetune_source(o.ft), t, run);
  };
  return w;
}

bool asks_no_steps(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--max-steps=0") == 0) return true;
    if (std::strcmp(argv[i], "--max-steps") == 0 && i + 1 < argc && std::strcmp(argv[i + 1], "0") == 0) return true;
  }
  return false;
}

RunOptions finetune_defaults(int argc, char** argv) {
  RunOptions d;
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

}  // namespace vkamp::app
