// llama_tiny: the whole fine-tuning path with nothing to download. Writes a
// small random Llama-shaped model in Hugging Face's folder layout
// (config.json, model.safetensors, the bundled tokenizer and chat template) into
// --out DIR/base, then fine-tunes it with LoRA on the bundled text (the
// GPL, examples/llama_tiny/) as vkamp-finetune does: the validation loss
// before and after, the adapters in PEFT's layout in DIR/adapter.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "app/finetune_job.hpp"
#include "finetune.hpp"
#include "llama_tiny_chat_template_jinja.h"
#include "llama_tiny_text_txt.h"
#include "llama_tiny_tokenizer_config_json.h"
#include "llama_tiny_tokenizer_json.h"
#include "sample_main.hpp"
#include "vkamp/io/safetensors.hpp"
#include "vkamp/models/llama_presets.hpp"
#include "vkamp/platform.hpp"
#include "vkamp/platform/files.hpp"

namespace {

using namespace vkamp;
namespace fs = std::filesystem;

void write_bytes(const fs::path& path, const unsigned char* data, size_t size) {
  try {
    platform::ReplacingFile out(platform::utf8_from_path(path));
    out.write(data, size);
    out.commit();
  } catch (const platform::FileError& e) {
    throw ConfigError(e.what());
  }
}

// config.json and model.safetensors as transformers' save_pretrained
// writes them, the weights drawn as Hugging Face initialises a Llama.
void write_base(const fs::path& dir, const models::LlamaConfig& c, uint32_t seq_len, uint64_t seed) {
  fs::create_directories(dir);
  nlohmann::ordered_json j;
  j["architectures"] = {c.architecture};
  j["model_type"] = "llama";
  j["vocab_size"] = c.vocab_size;
  j["hidden_size"] = c.hidden_size;
  j["intermediate_size"] = c.intermediate_size;
  j["num_hidden_layers"] = c.num_hidden_layers;
  j["num_attention_heads"] = c.num_attention_heads;
  j["num_key_value_heads"] = c.num_key_value_heads;
  j["hidden_act"] = "silu";
  j["max_position_embeddings"] = c.max_position_embeddings;
  j["rms_norm_eps"] = c.rms_norm_eps;
  j["rope_theta"] = c.rope.theta;
  j["tie_word_embeddings"] = c.tie_word_embeddings;
  j["initializer_range"] = c.initializer_range;
  j["bos_token_id"] = 1;
  j["eos_token_id"] = 2;
  j["torch_dtype"] = "float32";
  const std::string config = j.dump(2) + "\n";
  write_bytes(dir / "config.json", reinterpret_cast<const unsigned char*>(config.data()), config.size());

  const graph::Graph g = models::llama_graph(c, seq_len);
  std::mt19937_64 gen(seed);
  io::TensorFile f;
  f.metadata["format"] = "pt";
  for (int i : g.param_indices()) {
    const graph::Tensor& t = g.tensors()[i];
    std::vector<float> v(graph::elements(t), t.init == graph::Init::One ? 1.0f : 0.0f);
    std::normal_distribution<double> normal(0.0, c.initializer_range);
    if (t.init == graph::Init::Normal)
      for (float& x : v) x = float(normal(gen));
    io::Tensor out{t.name, io::DType::F32, std::vector<uint64_t>(t.dims.begin(), t.dims.end()), {}};
    out.data.resize(v.size() * 4);
    std::memcpy(out.data.data(), v.data(), out.data.size());
    f.tensors.push_back(std::move(out));
  }
  io::write_safetensors(platform::utf8_from_path(dir / "model.safetensors"), f);
  write_bytes(dir / "tokenizer.json", llama_tiny_tokenizer_json, llama_tiny_tokenizer_json_size);
  write_bytes(dir / "tokenizer_config.json", llama_tiny_tokenizer_config_json, llama_tiny_tokenizer_config_json_size);
  // TinyLlama-1.1B-Chat's template (Zephyr's), for "messages" data such as examples/llama_tiny/chat.jsonl.
  write_bytes(dir / "chat_template.jinja", llama_tiny_chat_template_jinja, llama_tiny_chat_template_jinja_size);
}

int run(app::RunOptions& cfg, Context& ctx) {
  if (!cfg.ft.model_dir.empty() || !cfg.ft.synthetic.empty())
    throw ConfigError("llama_tiny makes its own model: --model and --synthetic are vkamp-finetune's");
  const fs::path out = platform::path_from_utf8(cfg.ft.out_dir.empty() ? "llama_tiny_out" : cfg.ft.out_dir);
  write_base(out / "base", *models::llama_preset("llama-tiny"), cfg.ft.seq_len, cfg.seed);
  if (cfg.ft.data_path.empty()) {
    write_bytes(out / "text.txt", llama_tiny_text_txt, llama_tiny_text_txt_size);
    cfg.ft.data_path = platform::utf8_from_path(out / "text.txt");
  }
  std::printf("llama_tiny: a random llama-tiny model in %s\n", platform::utf8_from_path(out / "base").c_str());
  cfg.ft.model_dir = platform::utf8_from_path(out / "base");
  cfg.ft.out_dir = platform::utf8_from_path(out / "adapter");
  return samples::finetune(cfg, ctx, "llama_tiny");
}

}  // namespace

int main(int argc, char** argv) {
  vkamp::platform::utf8_arguments(argc, argv);
  // A random base learns slowly: a larger rate, more rows, more steps.
  vkamp::app::RunOptions defaults = vkamp::app::finetune_defaults(argc, argv);
  defaults.optimizer.lr = 3e-3;
  defaults.batch = 8;
  defaults.max_steps = 40;
  defaults.eval_every = 20;
  defaults.ft.seq_len = 64;
  defaults.ft.lora_rank = 8;
  defaults.ft.lora_alpha = 16;
  return vkamp::samples::sample_main(
      {"llama_tiny",
       "Writes a small random Llama-shaped model (2 layers, 64 channels, 4 heads sharing 2 key/value\n"
       "heads, Llama 2's tokenizer cut to 4487 tokens) in Hugging Face's folder layout into --out DIR/base, then\n"
       "fine-tunes it with LoRA on the bundled text (the GPL) as vkamp-finetune does: the validation loss\n"
       "before and after, the adapters in PEFT's layout in DIR/adapter. Nothing is downloaded; it takes a\n"
       "minute or two on a CPU driver. Takes vkamp-finetune's flags but --model and --synthetic; with\n"
       "--data examples/llama_tiny/chat.jsonl it fine-tunes on conversations, rendered with the chat\n"
       "template it writes beside the model (TinyLlama-1.1B-Chat's), the loss on the assistant's turns.",
       vkamp::app::Rows::FineTune},
      defaults, argc, argv, run);
}
