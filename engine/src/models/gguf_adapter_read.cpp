// Reading a GGUF LoRA adapter back (models/gguf_adapter.hpp): the checks of
// llama.cpp's llama_adapter_lora_init, then A and B in Hugging Face's
// layout.
#include <algorithm>
#include <string>

#include "vkamp/config_error.hpp"
#include "vkamp/models/gguf_adapter.hpp"
#include "vkamp/models/gguf_model.hpp"
#include "vkamp/quant/dequantize.hpp"

namespace vkamp::models {
namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::vector<float> tensor_values(const io::GgufFile& f, const io::GgufTensor& t) {
  using quant::GgmlType;
  if (t.type != GgmlType::F32 && t.type != GgmlType::F16 && t.type != GgmlType::BF16)
    throw ConfigError(f.path() + ": adapter tensor " + t.name + " is " + quant::ggml_type_info(t.type).name +
                      "; vkamp reads adapters in f32, f16 or bf16");
  std::vector<float> v(t.elements());
  quant::dequantize_row(t.type, t.data, v.data(), v.size());
  return v;
}

}  // namespace

GgufLoraAdapter read_gguf_adapter(const io::GgufFile& f, const LlamaConfig& base,
                                  const std::map<std::string, std::pair<uint64_t, uint64_t>>& base_weights) {
  const std::string type = f.optional_string("general.type").value_or("model");
  if (type != "adapter")
    throw ConfigError(f.path() + ": general.type is \"" + type + "\", not \"adapter\": not a LoRA adapter file");
  const std::string kind = f.optional_string("adapter.type").value_or("");
  if (kind != "lora") throw ConfigError(f.path() + ": adapter.type is \"" + kind + "\"; vkamp reads \"lora\" adapters");
  const std::string arch = f.string("general.architecture"), want = gguf_architecture(base);
  if (arch != want)
    throw ConfigError(f.path() + ": general.architecture is " + arch + ", but the model is " + want +
                      ": the adapter was made for another base");
  const double alpha = f.optional_number("adapter.lora.alpha").value_or(0);
  // The base's weights by their GGUF names.
  std::map<std::string, std::string> by_gguf;
  for (const auto& [name, shape] : base_weights)
    if (const auto g = gguf_tensor_name(name)) by_gguf[*g] = name;
  GgufLoraAdapter out;
  for (const io::GgufTensor& t : f.tensors()) {
    const bool is_a = ends_with(t.name, ".lora_a");
    if (!is_a && !ends_with(t.name, ".lora_b"))
      throw ConfigError(f.path() + ": tensor " + t.name + " is neither a .lora_a nor a .lora_b");
    const std::string stem = t.name.substr(0, t.name.size() - 7);
    const auto weight = by_gguf.find(stem);
    if (weight == by_gguf.end())
      throw ConfigError(f.path() + ": tensor " + t.name + " adapts " + stem + ", which the model does not have");
    if (!is_a) {  // read with its A
      if (!f.find_tensor(stem + ".lora_a")) throw ConfigError(f.path() + ": tensor " + t.name + " has no " + stem + ".lora_a");
      continue;
    }
    const io::GgufTensor* tb = f.find_tensor(stem + ".lora_b");
    if (!tb) throw ConfigError(f.path() + ": tensor " + t.name + " has no " + stem + ".lora_b");
    const auto [rows, cols] = base_weights.at(weight->second);
    // GGUF dims, fastest first: A {in, r}, B {r, out}.
    if (t.dims.size() != 2 || tb->dims.size() != 2 || t.dims[0] != cols || tb->dims[1] != rows ||
        t.dims[1] != tb->dims[0] || t.dims[1] == 0)
      throw ConfigError(f.path() + ": tensors " + t.name + " {" + std::to_string(t.dims[0]) + ", " +
                        std::to_string(t.dims.size() > 1 ? t.dims[1] : 0) + "} and " + tb->name + " {" +
                        std::to_string(tb->dims[0]) + ", " + std::to_string(tb->dims.size() > 1 ? tb->dims[1] : 0) +
                        "} do not fit " + weight->second + " {" + std::to_string(rows) + ", " + std::to_string(cols) +
                        "}: A must be {in " + std::to_string(cols) + ", r} and B {r, out " + std::to_string(rows) +
                        "} (an adapter made for another base?)");
    GgufLoraPair p;
    p.lora.rank = uint32_t(t.dims[1]);
    p.lora.alpha = alpha == 0 ? double(p.lora.rank) : alpha;  // llama.cpp: no alpha, scale 1
    p.a = tensor_values(f, t);
    const std::vector<float> b = tensor_values(f, *tb);
    // A `llama` file's q and k rows are permuted, B's with them: back to
    // Hugging Face's order.
    const uint32_t heads = gguf_rotary_heads(weight->second, base);
    if (heads == 0) {
      p.b = b;
    } else {
      const std::vector<uint32_t> from = gguf_rotary_rows(uint32_t(rows), heads);
      p.b.resize(b.size());
      for (uint64_t r = 0; r < rows; ++r)
        std::copy_n(b.begin() + from[r] * p.lora.rank, p.lora.rank, p.b.begin() + r * p.lora.rank);
    }
    out[weight->second] = std::move(p);
  }
  if (out.empty()) throw ConfigError(f.path() + ": the adapter has no tensors");
  return out;
}

}  // namespace vkamp::models
