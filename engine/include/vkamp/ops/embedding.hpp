// Token embedding plus learned position embedding (GPT's input layer),
// over rows = batch * seq_len token ids (uint32, row r = b * seq_len + t):
//   y[r, :] = wte[ids[r], :] + wpe[r % seq_len, :]
// wte: vocab x cols, wpe: seq_len x cols, y: rows x cols, in the storage
// format. Without wpe (Llama, whose positions are rotary), y = wte[ids]. An id >= vocab reads nothing: its row of y is NaN (as a label out
// of range in softmax_xent), so bad data shows in the loss instead of being
// clamped to a real token; it adds to no row of dwte.
#pragma once
#include <cstdint>
#include <optional>

#include "vkamp/buffer.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/quant/ggml_type.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::ops {

// `wte_blocks`: the table held in ggml blocks (a quantized frozen base),
// each value dequantized as it is gathered.
void embedding_forward(Sequence& seq, Format fmt, BufferView ids, BufferView wte, std::optional<BufferView> wpe, BufferView y,
                       uint32_t rows, uint32_t seq_len, uint32_t cols, uint32_t vocab,
                       std::optional<quant::GgmlType> wte_blocks = std::nullopt);

// dwte[v, :] = sum of dy[r, :] over rows with ids[r] == v; dwpe[t, :] = sum
// of dy[r, :] over rows with r % seq_len == t. fp32 sums in row order within
// fixed chunks of rows, the chunks then added in order: deterministic, no
// atomics, O(vocab * rows * cols) id reads for dwte (see
// shaders/embedding_grad.comp). Each is added to its old values when its
// flag is set (separate flags: a tied wte already holds the lm_head's part).
struct EmbeddingAccumulate {
  bool wte = false, wpe = false;
};
void embedding_backward(Sequence& seq, Format fmt, BufferView ids, BufferView dy, BufferView dwte,
                        std::optional<BufferView> dwpe,
                        uint32_t rows, uint32_t seq_len, uint32_t cols, uint32_t vocab,
                        EmbeddingAccumulate accumulate = {});

}  // namespace vkamp::ops
