// A GGUF base with its LoRA adapters merged in, written as the F16 GGUF
// file llama.cpp runs (vkamp-finetune --merge FILE.gguf), or in the base's
// own types (--merge-type base): every metadata
// key of the base as it is (general.file_type set to F16, the quantizer's
// own keys dropped), every tensor in the base's order under its name, the
// matrices in F16 (rounded to nearest even) and the vectors (norms,
// biases, rope_freqs) in F32, as convert_hf_to_gguf.py --outtype f16 keeps
// them. Each adapted weight is W + (alpha / r) B A (fold_adapter: PEFT's
// merge_and_unload), W dequantized from the base's blocks, in the file's
// own row order (B's q and k rows permuted as gguf_adapter.hpp says).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "vkamp/graph/graph.hpp"
#include "vkamp/io/gguf.hpp"
#include "vkamp/models/llama.hpp"

namespace vkamp::models {

// What the merged file holds: F16 (as above), or each tensor in the base's
// own type (`base`: the adapted ones requantized with ggml's reference
// quantizers, quant::quantize_row, as llama.cpp's quantizer writes them
// without an importance matrix; the others copied as they are; the
// quantizer's keys and general.file_type kept).
enum class MergedTypes { F16, Base };

// `g`: llama_graph of the base's config with `lora`; `values(name)` gives
// each adapter's fp32 values. Written atomically. ConfigError naming the
// base for a graph that does not fit it, or naming the tensor whose merged
// values its type cannot hold.
void write_merged_gguf(const std::string& path, const io::GgufFile& base, const graph::Graph& g, const LoraConfig& lora,
                       const std::function<std::vector<float>(const std::string& name)>& values,
                       MergedTypes types = MergedTypes::F16);

}  // namespace vkamp::models
