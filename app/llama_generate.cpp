#include "app/llama_generate.hpp"

#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <nlohmann/json.hpp>

#include "vkamp/config_error.hpp"
#include "vkamp/models/gguf_adapter.hpp"
#include "vkamp/models/gguf_model.hpp"
#include "vkamp/models/hf_checkpoint.hpp"
#include "vkamp/models/llama_decoder.hpp"
#include "vkamp/models/peft_adapter.hpp"
#include "vkamp/text/chat_tokens.hpp"
#include "vkamp/text/tokenizer.hpp"
#include "vkamp/train/hf_weights.hpp"
#include "vkamp/train/model.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::app {

namespace {

// config.json's torch_dtype, when it names bfloat16: fp16's range is too
// small for some bf16-trained models' activations.
Format default_precision(const std::string& dir) {
  if (io::is_gguf_path(dir)) return Format::F16;
  std::ifstream in(platform::path_from_utf8(dir) / "config.json", std::ios::binary);
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  return j.is_object() && j.value("torch_dtype", "") == "bfloat16" ? Format::BF16 : Format::F16;
}

// A GGUF file (mapped), or nothing for a folder; a bad file is a ConfigError.
std::optional<io::GgufFile> open_if_gguf(const std::string& path) {
  try {
    if (io::is_gguf_path(path)) return io::GgufFile::open(path);
  } catch (const io::FormatError& e) {
    throw ConfigError(e.what());
  }
  return std::nullopt;
}

// An adapter's factors per weight it adapts (Hugging Face's names), from a
// PEFT folder or a GGUF LoRA file as llama.cpp loads it.
using AdapterFactors = models::GgufLoraAdapter;

AdapterFactors read_adapter(const std::string& path, const models::LlamaConfig& c, const graph::Graph& base) {
  AdapterFactors out;
  if (io::is_gguf_path(path)) {
    std::map<std::string, std::pair<uint64_t, uint64_t>> shapes;
    for (const graph::Tensor& t : base.tensors())
      if (t.dims.size() == 2) shapes[t.name] = {t.dims[0], t.dims[1]};
    const std::optional<io::GgufFile> f = open_if_gguf(path);
    return models::read_gguf_adapter(*f, c, shapes);
  }
  const models::LoraConfig lora = models::read_peft_config(path);
  std::map<std::string, std::vector<float>> values;
  models::load_peft_adapter(path, models::llama_graph(c, 1, lora),
                            [&](const std::string& name, std::vector<float>&& v) { values[name] = std::move(v); });
  for (auto& [name, a] : values) {
    const size_t at = name.find(".lora_A.weight");
    if (at == std::string::npos) continue;
    const std::string stem = name.substr(0, at);
    out[stem + ".weight"] = {lora, std::move(a), std::move(values.at(stem + ".lora_B.weight"))};
  }
  return out;
}

// The chat prompt's ids: rendered with the generation prompt, encoded
// without added special tokens as transformers does; and the template's
// end-of-turn token, where it has one.
std::vector<int32_t> chat_prompt(const LlamaGeneration& g, const text::Tokenizer& tok, std::optional<int32_t>& end_of_turn) {
  const text::ModelChat chat = text::require_model_chat(g.model_dir, g.chat_template);
  const std::string messages =
      g.messages_json.empty() ? nlohmann::json::array({{{"role", "user"}, {"content", g.prompt}}}).dump() : g.messages_json;
  text::ChatVariables vars = chat.variables;
  vars.add_generation_prompt = true;
  const std::string text = chat.chat_template.render_json(messages, vars).text;
  end_of_turn = text::end_of_turn_token(chat, tok);
  return tok.encode(text, /*add_special=*/false);
}

// load_frozen_llama on a model already open: `gguf` where it is a GGUF
// file, and its configuration.
FrozenLlama load_frozen(Context& ctx, const std::string& model_path, const std::optional<io::GgufFile>& gguf,
                        const models::LlamaConfig& config, const std::string& adapter_path, Format precision,
                        uint64_t seed) {
  FrozenLlama out;
  out.config = config;
  models::LoraConfig frozen;
  frozen.frozen_base = true;
  graph::Graph g = models::llama_graph(out.config, 1, frozen);
  const AdapterFactors adapter = adapter_path.empty() ? AdapterFactors{} : read_adapter(adapter_path, config, g);
  std::set<std::string> adapted;
  for (const auto& [weight, factors] : adapter) adapted.insert(weight);
  // A GGUF file's quantized matrices stay in its blocks, as llama.cpp holds
  // them, but those an adapter is folded into (in the run's format).
  if (gguf) models::hold_gguf_blocks(g, *gguf, adapted);
  out.model = std::make_unique<train::Model>(ctx, std::move(g), precision, 1, seed, false, false);
  if (gguf)
    train::load_gguf_weights(*gguf, *out.model);
  else
    models::load_hf_weight_slices(model_path, out.model->graph(),
                                  [&](const std::string& name, uint64_t first, std::vector<float>&& v) {
                                    out.model->frozen().write_slice(name, first, v);
                                  });
  // W += alpha/r B A for each adapted projection, on the host, tensor by tensor.
  for (const auto& [weight, f] : adapter) {
    std::vector<float> w = out.model->frozen().read(weight);
    models::fold_adapter(w, f.a, f.b, f.lora);
    out.model->frozen().write(weight, w);
  }
  return out;
}

}  // namespace

FrozenLlama load_frozen_llama(Context& ctx, const std::string& model_path, const std::string& adapter_path,
                              Format precision, uint64_t seed) {
  const std::optional<io::GgufFile> gguf = open_if_gguf(model_path);
  return load_frozen(ctx, model_path, gguf, gguf ? models::read_gguf_config(*gguf) : models::read_hf_config(model_path),
                     adapter_path, precision, seed);
}

Generated generate_llama(Context& ctx, const LlamaGeneration& g, const std::function<void(const std::string&)>& emit) {
  const std::optional<io::GgufFile> gguf = open_if_gguf(g.model_dir);
  const models::LlamaConfig c = gguf ? models::read_gguf_config(*gguf) : models::read_hf_config(g.model_dir);
  const text::Tokenizer tok = gguf ? text::Tokenizer::from_gguf(*gguf) : text::Tokenizer::load(g.model_dir);
  models::check_tokenizer_fits(c, tok.vocab_size(), g.model_dir);
  std::optional<int32_t> end_of_turn;
  const std::vector<int32_t> prompt = g.chat || !g.messages_json.empty() ? chat_prompt(g, tok, end_of_turn)
                                                                           : tok.encode(g.prompt, /*add_special=*/true);
  if (prompt.empty()) throw ConfigError("--prompt gives no tokens");
  const uint64_t positions = prompt.size() + uint64_t(g.max_new_tokens);
  if (positions > c.max_position_embeddings)
    throw ConfigError("the prompt's " + std::to_string(prompt.size()) + " tokens and --max-new-tokens " +
                      std::to_string(g.max_new_tokens) + " need " + std::to_string(positions) +
                      " positions, past max_position_embeddings " + std::to_string(c.max_position_embeddings) + " of " + g.model_dir);
  Generated out;
  out.prompt_ids = prompt;
  out.precision = g.precision.value_or(default_precision(g.model_dir));
  const FrozenLlama frozen = load_frozen(ctx, g.model_dir, gguf, c, g.adapter_dir, out.precision, g.seed);
  models::LlamaDecoder decoder(ctx, c, out.precision, models::LlamaDecoder::frozen_weights(frozen.model->frozen()),
                               uint32_t(positions));
  // The prompt through the model in one batch (prefill), then token by token.
  std::vector<float> logits = decoder.prefill(std::vector<uint32_t>(prompt.begin(), prompt.end()));
  std::mt19937_64 gen(g.seed);
  for (uint32_t n = 0; n < g.max_new_tokens; ++n) {
    const int32_t id = int32_t(sample_next(logits, g.sampling, gen));
    out.ids.push_back(id);
    // The text so far, decoded whole (a character may take several tokens),
    // handed on past what was already shown.
    const std::string text = tok.decode(out.ids, /*skip_special=*/true);
    if (text.size() > out.text.size() && text.compare(0, out.text.size(), out.text) == 0) {
      if (emit) emit(text.substr(out.text.size()));
      out.text = text;
    }
    if ((tok.eos_id() && id == *tok.eos_id()) || (end_of_turn && id == *end_of_turn)) break;
    if (n + 1 < g.max_new_tokens) logits = decoder.append(uint32_t(id));
  }
  return out;
}

}  // namespace vkamp::app
