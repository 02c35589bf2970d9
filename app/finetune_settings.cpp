#include "app/finetune_settings.hpp"

#include "vkamp/config_error.hpp"
#include "vkamp/models/llama.hpp"
#include "vkamp/models/llama_presets.hpp"

namespace vkamp::app {

namespace {

using Row = config::Setting<RunOptions>;

const config::EnumNames<bool>& train_on_names() {
  static const config::EnumNames<bool> names = {{"assistant", false}, {"all", true}};
  return names;
}

// "q,v" or "q_proj,v_proj": the short names are PEFT's module names less "_proj".
Row targets_row() {
  Row s = config::row<RunOptions>(
      "lora_targets", {config::kFineTuneGroup, "LIST", "the projections that get adapters: q, k, v, o, gate, up, down"});
  s.parse = [](RunOptions& o, const std::string& v, const std::string& l) {
    std::vector<std::string> out;
    size_t at = 0;
    while (at <= v.size()) {
      const size_t comma = std::min(v.find(',', at), v.size());
      std::string t = v.substr(at, comma - at);
      at = comma + 1;
      if (t.empty()) continue;
      if (t.size() < 5 || t.compare(t.size() - 5, 5, "_proj") != 0) t += "_proj";
      const auto& known = models::LoraConfig::kLoraDefaultTargets();
      if (std::find(known.begin(), known.end(), t) == known.end())
        config::fail(l, "unknown projection '" + t + "' (expected q, k, v, o, gate, up, down)");
      out.push_back(t);
    }
    if (out.empty()) config::fail(l, "names no projection");
    o.ft.lora_targets = out;
  };
  s.show = [](const RunOptions& o) {
    std::string t;
    for (const std::string& p : o.ft.lora_targets) {
      if (!t.empty()) t += ',';
      t.append(p, 0, p.size() - 5);  // less "_proj"
    }
    return t;
  };
  return s;
}

Row synthetic_row() {
  Row s = config::text<RunOptions>(
      "synthetic", {config::kFineTuneGroup, "NAME", "a named shape with random weights instead of --model, to plan memory and speed"},
      VKAMP_FIELD(ft.synthetic), "none");
  s.check = [](const RunOptions& o) {
    if (!o.ft.synthetic.empty() && !models::llama_preset(o.ft.synthetic))
      throw ConfigError(config::names("synthetic") + ": unknown shape '" + o.ft.synthetic + "' (" +
                        models::llama_preset_names() + ")");
  };
  return s;
}

}  // namespace

std::vector<config::Setting<RunOptions>> finetune_rows() {
  using config::text;
  const char* g = config::kFineTuneGroup;
  return {
      text<RunOptions>("model", {g, "DIR|FILE.gguf", "a Hugging Face model folder (config.json, safetensors, tokenizer.json) "
                                                     "or a GGUF file (its quantized weights stay quantized)"},
                       VKAMP_FIELD(ft.model_dir), "required unless --synthetic"),
      text<RunOptions>("quantize", {g, "TYPE", "hold the frozen base quantized in llama.cpp's blocks of TYPE (q8_0, q4_0, "
                                               "q4_1, q5_0, q5_1, q4_k, q5_k, q6_k): QLoRA"},
                       VKAMP_FIELD(ft.quantize), "none (a GGUF file keeps its own types)"),
      synthetic_row(),
      text<RunOptions>("data", {g, "FILE", "plain text, or JSON Lines (.jsonl) of {\"text\": ...}, {\"prompt\": ..., \"completion\": ...} or {\"messages\": [{\"role\", \"content\"}, ...]}"},
                       VKAMP_FIELD(ft.data_path), "required unless --synthetic (random tokens)"),
      text<RunOptions>("out", {g, "DIR", "where adapter_model.safetensors and adapter_config.json go (PEFT's layout; "
                                         "adapter.gguf too for a GGUF base; with --lora-rank 0, the whole model folder)"},
                       VKAMP_FIELD(ft.out_dir), "required to train"),
      text<RunOptions>("merge", {g, "DIR", "also write a model folder with the adapters merged in (Hugging Face's layout; "
                                            "FILE.gguf for a GGUF base: an F16 GGUF file)"},
                       VKAMP_FIELD(ft.merge_dir), "none"),
      text<RunOptions>("merge_type", {g, "f16|base", "--merge FILE.gguf: F16, or each tensor in the base's own type "
                                                     "(the adapted ones requantized as llama.cpp's quantizer does)"},
                       VKAMP_FIELD(ft.merge_type), "f16"),
      config::count<RunOptions>("lora_rank", {g, "R", "the adapters' rank (0 = train every weight)"},
                               VKAMP_FIELD(ft.lora_rank)),
      config::real<RunOptions>("lora_alpha", {g, "A", "the adapters' alpha: they are scaled by alpha / rank"},
                               VKAMP_FIELD(ft.lora_alpha), config::Range::above(0)),
      targets_row(),
      config::real<RunOptions>("lora_dropout", {g, "P", "drop this fraction of each adapter's input in training (PEFT's lora_dropout)"},
                               VKAMP_FIELD(ft.lora_dropout), config::Range::from_to_below(0, 1)),
      config::count<RunOptions>("seq_len", {g, "N", "tokens per packed training sequence"}, VKAMP_FIELD(ft.seq_len), 1),
      config::real<RunOptions>("val_fraction", {g, "F", "the last fraction of the text's tokens that validates"},
                               VKAMP_FIELD(ft.val_fraction), config::Range::from_to_below(0, 1)),
      text<RunOptions>("chat_template",
                       {g, "FILE", "the chat template (Jinja) that renders \"messages\" data, instead of the model's"},
                       VKAMP_FIELD(ft.chat_template), "the model's"),
      config::choice<RunOptions>("train_on",
                                 {g, "WHAT", "assistant | all: for \"messages\" data, the loss on the assistant's "
                                             "turns alone, or on every token"},
                                 VKAMP_FIELD(ft.train_on_all), train_on_names()),
  };
}

}  // namespace vkamp::app
