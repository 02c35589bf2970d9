// LoRA adapters as the GGUF file llama.cpp's --lora (llama_adapter_lora_init
// in src/llama-adapter.cpp) and Ollama's ADAPTER read, laid out as
// llama.cpp's convert_lora_to_gguf.py writes them: general.architecture
// (the base's: llama or qwen2), general.type "adapter", adapter.type "lora",
// adapter.lora.alpha (f32); per adapted projection "<base tensor>.lora_a"
// (PEFT's A [r, in], GGUF dims {in, r}) and ".lora_b" (B [out, r], dims
// {r, out}), in F32. For a `llama` base the rows of q's and k's B are
// permuted as the converter permutes the base's q and k rows
// (gguf_rotary_rows), so that B A lands on the file's rows. llama.cpp adds
// (alpha / r) B (A x) to each projection, as PEFT does.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "vkamp/graph/graph.hpp"
#include "vkamp/io/gguf.hpp"
#include "vkamp/models/llama.hpp"

namespace vkamp::models {

// The GGUF architecture of a Llama-family config: "qwen2" or "llama".
std::string gguf_architecture(const LlamaConfig& c);

// "model.layers.0.self_attn.q_proj.lora_A.weight" -> "blk.0.attn_q.weight.lora_a".
std::string gguf_adapter_name(const std::string& adapter);

// The heads whose rows a `llama` file permutes in the projection `name`
// (a weight or adapter of q_proj: the q heads; of k_proj: the key/value
// heads); 0 for any other projection or a `qwen2` base.
uint32_t gguf_rotary_heads(const std::string& name, const LlamaConfig& base);
// B's rows (PEFT's [rows, r]) in the file's order for a projection whose
// rows the file permutes in `heads` heads (gguf_rotary_rows); unchanged
// for heads 0.
std::vector<float> gguf_adapter_rows(std::vector<float> b, uint32_t rows, uint32_t heads);

// Writes `path` atomically (never a partial file). `values(name)` gives each
// adapter's fp32 values (the masters), in PEFT's layout. ConfigError for a
// graph without adapters or an adapter on a module GGUF has no name for.
void write_gguf_adapter(const std::string& path, const graph::Graph& g, const LoraConfig& lora, const LlamaConfig& base,
                        const std::function<std::vector<float>(const std::string& name)>& values);

// A LoRA adapter read from such a file (vkamp's, or convert_lora_to_gguf.py's,
// in F32, F16 or BF16), per adapted weight of the base under Hugging Face's
// name ("model.layers.0.self_attn.q_proj.weight"): A {r, in} and B {out, r}
// with B's rows in Hugging Face's order, and the LoRA settings that fold it
// (fold_adapter) as llama.cpp applies it: alpha / r, or 1 where the file's
// alpha is 0 (llama.cpp's rule).
struct GgufLoraPair {
  LoraConfig lora;  // rank and alpha
  std::vector<float> a, b;
};
using GgufLoraAdapter = std::map<std::string, GgufLoraPair>;
// Checks the file as llama.cpp's llama_adapter_lora_init does, each failure
// a ConfigError naming the file and the key or tensor: general.type
// "adapter" and adapter.type "lora"; general.architecture the base's; every
// tensor a ".lora_a"/".lora_b" pair of a weight in `base_weights` (Hugging
// Face name -> {out, in}) with A {in, r} and B {r, out} in GGUF's dims.
GgufLoraAdapter read_gguf_adapter(const io::GgufFile& f, const LlamaConfig& base,
                                  const std::map<std::string, std::pair<uint64_t, uint64_t>>& base_weights);

}  // namespace vkamp::models
