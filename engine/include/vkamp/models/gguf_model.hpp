// Llama-family models in GGUF files, as llama.cpp's convert_hf_to_gguf.py
// writes them: architectures `llama` (Llama, Mistral, TinyLlama) and
// `qwen2`, their hyper-parameters from the file's keys, and their tensors
// under Hugging Face's names (token_embd -> model.embed_tokens, blk.N.attn_q
// -> model.layers.N.self_attn.q_proj, ...). The converter permutes the q
// and k rows of `llama` models for llama.cpp's interleaved rotary form; the
// loader puts them back in Hugging Face's order, so the same graph runs
// both. Anything else is a ConfigError naming the file and the key.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "vkamp/graph/graph.hpp"
#include "vkamp/io/gguf.hpp"
#include "vkamp/models/hf_checkpoint.hpp"
#include "vkamp/models/llama.hpp"

namespace vkamp::models {

// The architectures read from GGUF.
inline constexpr const char* kGgufArchitectures[] = {"llama", "qwen2"};

LlamaConfig read_gguf_config(const io::GgufFile& f);

// The GGUF name of a graph tensor ("model.layers.3.mlp.up_proj.weight" ->
// "blk.3.ffn_up.weight"); nullopt for a name with none.
std::optional<std::string> gguf_tensor_name(const std::string& hf_name);

// The rows of a q or k projection (or its bias) as convert_hf_to_gguf.py
// permutes them for a `llama` file: for each head, Hugging Face's row
// half * hd/2 + i is the file's row 2 i + half. `heads` is the q heads for q
// and the key/value heads for k. Returns, for each Hugging Face row, the
// file's row.
std::vector<uint32_t> gguf_rotary_rows(uint32_t rows, uint32_t heads);
// Whether the file's q and k rows are in that permuted order.
bool gguf_permutes_rotary(const io::GgufFile& f);

// Every parameter and frozen parameter of `g` but the adapters, from the
// file's tensors, as floats (quantized blocks dequantized as ggml does) in
// slices of at most kLoadSliceBytes of output, handed to `put` in Hugging
// Face's layout. A tensor the graph holds in the file's own blocks
// (Tensor::blocks) goes to `put_blocks` instead, as the file's rows (q and
// k rows in Hugging Face's order), never dequantized. Returns the bytes
// read from the file.
using BlockSliceSink = std::function<void(const std::string& name, uint64_t first_row, std::vector<uint8_t>&& rows)>;
uint64_t load_gguf_weight_slices(const io::GgufFile& f, const graph::Graph& g, const TensorSliceSink& put,
                                 const BlockSliceSink& put_blocks = {});

// Holds each frozen matrix of `g` that the file stores quantized in the
// file's own blocks (a QLoRA base as llama.cpp holds it), but those named
// in `except` (matrices an adapter is folded into).
void hold_gguf_blocks(graph::Graph& g, const io::GgufFile& f, const std::set<std::string>& except = {});
// The type llama.cpp's quantizer writes for rows of `row` values asked to
// be `type` (llama-quant.cpp's tensor_type_fallback): `type` where the rows
// are whole blocks of it, else q4_k -> q5_0, q5_k -> q5_1, q6_k -> q8_0
// (32-value blocks); nullopt where those do not fit either (llama.cpp then
// writes F16).
std::optional<quant::GgmlType> quantize_type_for_rows(quant::GgmlType type, uint64_t row);
// Holds each frozen matrix of `g` in blocks of quantize_type_for_rows(type,
// its row) (--quantize); returns the names of those left in the run's
// format because no type fits their rows.
std::vector<std::string> hold_frozen_in_blocks(graph::Graph& g, quant::GgmlType type);

}  // namespace vkamp::models
