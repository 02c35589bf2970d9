// Generation with a KV cache: nanoGPT's GPT (gpt.hpp) run one position at
// a time. Each layer keeps the q | k | v rows of the positions so far on
// the device, so a new token costs one row through every layer (and one
// query against the cached keys) instead of the whole window again. The
// logits are those of the full forward at the same position, up to the
// rounding of different summation orders (a GEMM of one row may split its
// sums where the window's does not); tests/train/test_gpt_decoder.cpp
// compares them.
//
// The cache holds at most block_size positions: the position embedding is
// learned and absolute, so once a text is longer than the window, moving
// the window changes every cached row and the caller runs the full
// forward over the last block_size tokens instead (as nanoGPT crops).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vkamp/buffer.hpp"
#include "vkamp/context.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/graph/param_layout.hpp"
#include "vkamp/models/gpt.hpp"

namespace vkamp::models {

class GptDecoder {
 public:
  // `working`: the 16-bit (or fp32) working copy of gpt_graph(c)'s
  // parameters in format `fmt`, laid out as `tensors` (a train::Model's
  // working() and tensors()). Read at every append, never written: a
  // model that trains on between appends is seen as it is then, but the
  // cached rows keep the weights they were computed with (reset()).
  GptDecoder(Context& ctx, const GptConfig& c, Format fmt, const Buffer& working,
             const std::vector<graph::ParamTensor>& tensors);
  ~GptDecoder();
  GptDecoder(const GptDecoder&) = delete;
  GptDecoder& operator=(const GptDecoder&) = delete;

  // The positions cached, from 0 up to block_size.
  uint32_t length() const { return length_; }
  void reset() { length_ = 0; }
  // Runs `token` at position length() and caches its rows; returns the
  // logits (vocab_size, fp32) for the position after it. Throws Error when
  // the cache is full (length() == block_size) or the token is out of range.
  std::vector<float> append(uint32_t token);

 private:
  struct Weights;
  BufferView weight(const std::string& name) const;

  Context& ctx_;
  GptConfig c_;
  Format fmt_;
  const Buffer& working_;
  std::vector<graph::ParamTensor> tensors_;
  uint32_t length_ = 0;
  // One row each (x: the residual stream), and per layer the cached rows.
  std::unique_ptr<Buffer> ids_, pos_, x_, h_, qkv_, att_, mlp_, probs_, logits_, mean_rstd_;
  std::vector<std::unique_ptr<Buffer>> cache_;
};

}  // namespace vkamp::models
