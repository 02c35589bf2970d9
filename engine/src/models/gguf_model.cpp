#include "vkamp/models/gguf_model.hpp"

#include <algorithm>
#include <map>

#include "vkamp/config_error.hpp"
#include "vkamp/quant/dequantize.hpp"

namespace vkamp::models {
namespace {

using io::GgufFile;
using io::GgufTensor;

std::string dims_text(const std::vector<uint64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

// Hugging Face module names and their GGUF names (llama.cpp's tensor map).
const std::map<std::string, std::string>& layer_names() {
  static const std::map<std::string, std::string> m = {
      {"input_layernorm", "attn_norm"},    {"self_attn.q_proj", "attn_q"}, {"self_attn.k_proj", "attn_k"},
      {"self_attn.v_proj", "attn_v"},      {"self_attn.o_proj", "attn_output"},
      {"post_attention_layernorm", "ffn_norm"}, {"mlp.gate_proj", "ffn_gate"}, {"mlp.up_proj", "ffn_up"},
      {"mlp.down_proj", "ffn_down"}};
  return m;
}

uint32_t key_count(const GgufFile& f, const std::string& key) {
  const uint64_t v = f.unsigned_integer(key);
  if (v == 0 || v > 0xffffffffu) throw ConfigError(f.path() + ": " + key + " is " + std::to_string(v));
  return uint32_t(v);
}

}  // namespace

std::optional<std::string> gguf_tensor_name(const std::string& hf) {
  if (hf == "model.embed_tokens.weight") return "token_embd.weight";
  if (hf == "model.norm.weight") return "output_norm.weight";
  if (hf == "lm_head.weight") return "output.weight";
  const std::string prefix = "model.layers.";
  if (hf.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  const size_t dot = hf.find('.', prefix.size());
  if (dot == std::string::npos) return std::nullopt;
  const std::string layer = hf.substr(prefix.size(), dot - prefix.size());
  const size_t last = hf.rfind('.');
  const std::string module = hf.substr(dot + 1, last - dot - 1), kind = hf.substr(last + 1);
  auto it = layer_names().find(module);
  if (it == layer_names().end() || (kind != "weight" && kind != "bias")) return std::nullopt;
  return "blk." + layer + "." + it->second + "." + kind;
}

bool gguf_permutes_rotary(const GgufFile& f) { return f.string("general.architecture") == "llama"; }

std::vector<uint32_t> gguf_rotary_rows(uint32_t rows, uint32_t heads) {
  const uint32_t hd = rows / heads, half = hd / 2;
  std::vector<uint32_t> from(rows);
  for (uint32_t h = 0; h < heads; ++h)
    for (uint32_t s = 0; s < 2; ++s)
      for (uint32_t i = 0; i < half; ++i) from[h * hd + s * half + i] = h * hd + 2 * i + s;
  return from;
}

LlamaConfig read_gguf_config(const GgufFile& f) {
  try {
    const std::string arch = f.string("general.architecture");
    if (std::none_of(std::begin(kGgufArchitectures), std::end(kGgufArchitectures), [&](const char* a) { return arch == a; }))
      throw ConfigError(f.path() + ": general.architecture is " + arch + "; vkamp reads llama and qwen2");
    LlamaConfig c;
    c.architecture = arch == "qwen2" ? "Qwen2ForCausalLM" : "LlamaForCausalLM";
    const std::string k = arch + ".";
    c.hidden_size = key_count(f, k + "embedding_length");
    c.intermediate_size = key_count(f, k + "feed_forward_length");
    c.num_hidden_layers = key_count(f, k + "block_count");
    c.num_attention_heads = key_count(f, k + "attention.head_count");
    c.num_key_value_heads = f.find(k + "attention.head_count_kv") ? key_count(f, k + "attention.head_count_kv")
                                                                  : c.num_attention_heads;
    if (f.find(k + "attention.key_length")) c.head_dim = key_count(f, k + "attention.key_length");
    if (f.find(k + "attention.value_length") && key_count(f, k + "attention.value_length") != c.head_size())
      throw ConfigError(f.path() + ": attention.value_length differs from the key length, which the Llama graph does not build");
    c.max_position_embeddings = key_count(f, k + "context_length");
    c.rms_norm_eps = f.number(k + "attention.layer_norm_rms_epsilon");
    c.rope.theta = f.optional_number(k + "rope.freq_base").value_or(10000);
    if (auto dims = f.optional_unsigned(k + "rope.dimension_count"); dims && *dims != c.head_size())
      throw ConfigError(f.path() + ": rope.dimension_count " + std::to_string(*dims) + " rotates part of a head of " +
                        std::to_string(c.head_size()) + ", which the Llama graph does not build");
    if (auto scaling = f.optional_string(k + "rope.scaling.type"); scaling && *scaling != "none")
      throw ConfigError(f.path() + ": rope.scaling.type " + *scaling + " is not supported (vkamp implements Llama 3's rope_freqs and none)");
    if (const GgufTensor* freqs = f.find_tensor("rope_freqs.weight")) {
      if (freqs->type != quant::GgmlType::F32 || freqs->elements() != c.head_size() / 2)
        throw ConfigError(f.path() + ": rope_freqs.weight must hold " + std::to_string(c.head_size() / 2) + " F32 factors");
      c.rope.freq_factors.resize(c.head_size() / 2);
      std::vector<float> v(c.rope.freq_factors.size());
      quant::dequantize_row(freqs->type, freqs->data, v.data(), v.size());
      std::copy(v.begin(), v.end(), c.rope.freq_factors.begin());
    }
    const GgufTensor* embd = f.find_tensor("token_embd.weight");
    if (embd == nullptr || embd->dims.size() != 2 || embd->dims[0] != c.hidden_size)
      throw ConfigError(f.path() + ": token_embd.weight must be [" + std::to_string(c.hidden_size) + ", vocabulary]");
    c.vocab_size = uint32_t(embd->dims[1]);
    c.tie_word_embeddings = f.find_tensor("output.weight") == nullptr;
    c.attention_bias = f.find_tensor("blk.0.attn_q.bias") != nullptr;
    return c;
  } catch (const io::FormatError& e) {
    throw ConfigError(e.what());
  }
}

void hold_gguf_blocks(graph::Graph& g, const GgufFile& f, const std::set<std::string>& except) {
  for (int i : g.frozen_indices()) {
    const graph::Tensor& t = g.tensors()[size_t(i)];
    if (except.count(t.name)) continue;
    const std::optional<std::string> name = gguf_tensor_name(t.name);
    const GgufTensor* src = name ? f.find_tensor(*name) : nullptr;
    if (src != nullptr && t.dims.size() == 2 && quant::is_quantized(src->type)) g.hold_in_blocks(t.name, src->type);
  }
}

std::optional<quant::GgmlType> quantize_type_for_rows(quant::GgmlType type, uint64_t row) {
  using quant::GgmlType;
  auto fits = [&](GgmlType t) { return row % quant::ggml_type_info(t).block_values == 0; };
  if (fits(type)) return type;
  const GgmlType fallback = type == GgmlType::Q4_K   ? GgmlType::Q5_0
                            : type == GgmlType::Q5_K ? GgmlType::Q5_1
                            : type == GgmlType::Q6_K ? GgmlType::Q8_0
                                                     : type;
  if (fallback != type && fits(fallback)) return fallback;
  return std::nullopt;
}

std::vector<std::string> hold_frozen_in_blocks(graph::Graph& g, quant::GgmlType type) {
  std::vector<std::string> left;
  for (int i : g.frozen_indices()) {
    const graph::Tensor& t = g.tensors()[size_t(i)];
    if (t.dims.size() != 2) continue;
    if (const std::optional<quant::GgmlType> held = quantize_type_for_rows(type, t.dims[1]))
      g.hold_in_blocks(t.name, *held);
    else
      left.push_back(t.name);
  }
  return left;
}

uint64_t load_gguf_weight_slices(const GgufFile& f, const graph::Graph& g, const TensorSliceSink& put,
                                 const BlockSliceSink& put_blocks) {
  const LlamaConfig c = read_gguf_config(f);
  const bool permuted = gguf_permutes_rotary(f);
  std::map<std::string, bool> used;
  uint64_t read = 0;
  for (const graph::Tensor& t : g.tensors()) {
    if ((t.kind != graph::TensorKind::Param && t.kind != graph::TensorKind::Frozen) || is_lora_adapter(t.name)) continue;
    const std::vector<uint64_t> want(t.dims.begin(), t.dims.end());
    const std::optional<std::string> name = gguf_tensor_name(t.name);
    const GgufTensor* src = name ? f.find_tensor(*name) : nullptr;
    if (src == nullptr)
      throw ConfigError(f.path() + ": tensor " + name.value_or(t.name) + " (" + t.name + " " + dims_text(want) + ") is missing");
    used[src->name] = true;
    if (src->shape() != want)
      throw ConfigError(f.path() + ": tensor " + src->name + " is " + dims_text(src->shape()) + " but the file's keys imply " +
                        dims_text(want));
    // One row is the file's fastest dimension (the whole tensor for a
    // vector); the rows of q and k are read in Hugging Face's order.
    const uint64_t row = src->dims[0], rows = src->elements() / row;
    const uint64_t row_bytes = quant::ggml_row_bytes(src->type, row);
    std::vector<uint32_t> order;
    const bool q = src->name.find(".attn_q.") != std::string::npos, k = src->name.find(".attn_k.") != std::string::npos;
    const bool bias = src->dims.size() == 1;  // its elements are the projection's rows
    if (permuted && (q || k))
      order = gguf_rotary_rows(uint32_t(bias ? row : rows), q ? c.num_attention_heads : c.num_key_value_heads);
    if (t.blocks) {  // the file's rows as they are
      if (*t.blocks != src->type || !put_blocks)
        throw ConfigError(f.path() + ": tensor " + src->name + " is " + quant::ggml_type_info(src->type).name +
                          ", not the " + quant::ggml_type_info(*t.blocks).name + " blocks the graph holds");
      const uint64_t per_slice = std::max<uint64_t>(1, kLoadSliceBytes / row_bytes);
      for (uint64_t r0 = 0; r0 < rows; r0 += per_slice) {
        const uint64_t n = std::min(per_slice, rows - r0);
        std::vector<uint8_t> out(size_t(n * row_bytes));
        for (uint64_t r = 0; r < n; ++r) {
          const uint64_t from = order.empty() ? r0 + r : order[size_t(r0 + r)];
          std::copy_n(src->data + from * row_bytes, row_bytes, out.data() + r * row_bytes);
        }
        put_blocks(t.name, r0, std::move(out));
      }
      read += src->bytes;
      continue;
    }
    const uint64_t per_slice = std::max<uint64_t>(1, kLoadSliceBytes / 4 / row);
    for (uint64_t r0 = 0; r0 < rows; r0 += per_slice) {
      const uint64_t n = std::min(per_slice, rows - r0);
      std::vector<float> out(size_t(n * row));
      for (uint64_t r = 0; r < n; ++r) {
        const uint64_t from = order.empty() || bias ? r0 + r : order[size_t(r0 + r)];
        quant::dequantize_row(src->type, src->data + from * row_bytes, out.data() + r * row, row);
      }
      if (bias && !order.empty()) {
        std::vector<float> in = out;
        for (size_t i = 0; i < out.size(); ++i) out[i] = in[order[i]];
      }
      put(t.name, r0 * row, std::move(out));
    }
    read += src->bytes;
  }
  for (const GgufTensor& t : f.tensors())
    if (!used.count(t.name) && t.name != "rope_freqs.weight")
      throw ConfigError(f.path() + ": tensor " + t.name + " is not a parameter of the Llama graph the file's keys describe");
  return read;
}

}  // namespace vkamp::models
