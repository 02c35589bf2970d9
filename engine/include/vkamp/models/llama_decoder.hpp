// Generation with a KV cache for the Llama family (llama.hpp), one position
// at a time, as GptDecoder does for the GPT: each layer keeps the attention
// rows q' | k' | v' (rotated, key/value heads repeated) of the positions so
// far, so a new token costs one row through every layer and one query
// against the cached keys. Rotary positions are relative, so the cache
// holds up to `max_positions` (at most max_position_embeddings) and never
// needs recomputing. The logits are the full forward's at the same
// position, up to summation order (tests/models/test_llama_decoder.cpp).
#pragma once
#include <functional>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vkamp/buffer.hpp"
#include "vkamp/context.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/graph/frozen_store.hpp"
#include "vkamp/graph/param_layout.hpp"
#include "vkamp/models/llama.hpp"

namespace vkamp::models {

class LlamaDecoder {
 public:
  // A weight as the decoder reads it: in format `fmt`, or in ggml blocks
  // (a GGUF file's quantized matrices, dequantized as the GEMM and the
  // embedding gather load them).
  struct Weight {
    BufferView view;
    std::optional<quant::GgmlType> blocks;
  };
  // `weights`: each of llama_graph(c, ...)'s parameters by name (a frozen
  // store's tensors, or flat_weights of a Model's working copy); read at
  // every append, never written.
  using Weights = std::function<Weight(const std::string& name)>;
  LlamaDecoder(Context& ctx, const LlamaConfig& c, Format fmt, Weights weights, uint32_t max_positions);
  // The views of a flat buffer laid out as `tensors` (a Model's working() and tensors()).
  static Weights flat_weights(const Buffer& flat, Format fmt, const std::vector<graph::ParamTensor>& tensors);
  // The tensors of a frozen store (a model whose every weight is frozen),
  // those held in blocks read in their blocks.
  static Weights frozen_weights(const graph::FrozenStore& store);
  ~LlamaDecoder();
  LlamaDecoder(const LlamaDecoder&) = delete;
  LlamaDecoder& operator=(const LlamaDecoder&) = delete;

  uint32_t length() const { return length_; }
  uint32_t max_positions() const { return max_positions_; }
  void reset() { length_ = 0; }
  // Runs `token` at position length() and caches its rows; returns the
  // logits (vocab_size, fp32) for the next position. Throws Error when the
  // cache is full or the token is out of range.
  std::vector<float> append(uint32_t token);
  // Runs a prompt's tokens at positions length() on and caches their rows;
  // returns the logits after the last. From an empty cache the rows go
  // through the model at once (one GEMM per weight for all of them, causal
  // attention among them), else one at a time. The same logits as appending
  // them one by one, up to summation order (tests/models/test_llama_decoder.cpp).
  std::vector<float> prefill(const std::vector<uint32_t>& tokens);

 private:
  struct Rows;
  Weight weight(const std::string& name) const;
  std::vector<float> run(const std::vector<uint32_t>& tokens, Rows& rows);

  Context& ctx_;
  LlamaConfig c_;
  Format fmt_;
  Weights weights_;
  uint32_t max_positions_, length_ = 0;
  std::unique_ptr<Rows> one_;  // the activations of one row (append)
  std::unique_ptr<Buffer> last_, probs_, logits_, stats_, table_;
  std::vector<std::unique_ptr<Buffer>> cache_;
};

}  // namespace vkamp::models
