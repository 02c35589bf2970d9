#include "vkamp/models/gguf_adapter.hpp"

#include <cstring>

#include "vkamp/config_error.hpp"
#include "vkamp/io/gguf_writer.hpp"
#include "vkamp/models/gguf_model.hpp"
#include "vkamp/models/hf_checkpoint.hpp"
#include "vkamp/platform/files.hpp"

namespace vkamp::models {

std::vector<float> gguf_adapter_rows(std::vector<float> b, uint32_t rows, uint32_t heads) {
  if (heads == 0) return b;
  const std::vector<uint32_t> from = gguf_rotary_rows(rows, heads);
  const size_t width = b.size() / rows;
  std::vector<float> out(b.size());
  for (uint32_t r = 0; r < rows; ++r) std::memcpy(&out[from[r] * width], &b[r * width], width * sizeof(float));
  return out;
}

uint32_t gguf_rotary_heads(const std::string& name, const LlamaConfig& base) {
  if (gguf_architecture(base) != "llama") return 0;
  if (name.find(".q_proj.") != std::string::npos) return base.num_attention_heads;
  if (name.find(".k_proj.") != std::string::npos) return base.num_key_value_heads;
  return 0;
}

std::string gguf_architecture(const LlamaConfig& c) { return c.architecture == "Qwen2ForCausalLM" ? "qwen2" : "llama"; }

std::string gguf_adapter_name(const std::string& adapter) {
  for (const char* part : {".lora_A.weight", ".lora_B.weight"}) {
    const size_t at = adapter.size() - std::strlen(part);
    if (adapter.size() <= std::strlen(part) || adapter.compare(at, std::string::npos, part) != 0) continue;
    const std::optional<std::string> base = gguf_tensor_name(adapter.substr(0, at) + ".weight");
    if (!base) break;
    return *base + (part[6] == 'A' ? ".lora_a" : ".lora_b");
  }
  throw ConfigError("the adapter " + adapter + " has no GGUF name (llama.cpp's tensor map has none for its module)");
}

void write_gguf_adapter(const std::string& path, const graph::Graph& g, const LoraConfig& lora, const LlamaConfig& base,
                        const std::function<std::vector<float>(const std::string& name)>& values) {
  const std::string arch = gguf_architecture(base);
  io::GgufMetadata meta = {{"general.architecture", io::gguf_string(arch)},
                           {"general.type", io::gguf_string("adapter")},
                           {"adapter.type", io::gguf_string("lora")},
                           {"adapter.lora.alpha", io::gguf_f32(float(lora.alpha))}};
  std::vector<io::GgufTensorOut> tensors;
  for (int i : g.param_indices()) {
    const graph::Tensor& t = g.tensors()[i];
    if (!is_lora_adapter(t.name)) continue;
    const std::string name = t.name;
    const uint32_t rows = uint32_t(t.dims[0]);
    // B's rows follow the base's (A's columns are the input's, never permuted).
    const uint32_t heads = name.find(".lora_B.") != std::string::npos ? gguf_rotary_heads(name, base) : 0;
    tensors.push_back({gguf_adapter_name(name), {t.dims[1], t.dims[0]}, quant::GgmlType::F32, [&values, name, rows, heads] {
                         const std::vector<float> v = gguf_adapter_rows(values(name), rows, heads);
                         std::vector<uint8_t> bytes(v.size() * sizeof(float));
                         std::memcpy(bytes.data(), v.data(), bytes.size());
                         return bytes;
                       }});
  }
  if (tensors.empty()) throw ConfigError(path + ": the model has no LoRA adapters to write");
  try {
    io::write_gguf(path, meta, tensors);
  } catch (const platform::FileError& e) {
    throw ConfigError(e.what());
  }
}

}  // namespace vkamp::models
