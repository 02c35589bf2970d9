// The language-model loss without whole logits. Where a graph's output is
// a linear of a frozen weight (a LoRA fine-tune's lm_head, or the tied
// embedding table) and the loss is softmax cross-entropy, the model's
// executor stops before that node (Graph::without_output_node) and this
// runs it a block of rows at a time: logits_c = h_c W^T, the rows' losses,
// their gradient dlogits_c = (softmax - onehot) S / targets, then
// dh_c = dlogits_c W. A step holds a chunk's logits and their gradient, not
// every token's (Liger's and unsloth's fused linear cross-entropy do the
// same).
//
// The same kernels on the same rows as the whole path (StepProgram's
// softmax_xent over Model::output()), each GEMM planned as the whole
// product (Gemm::plan_rows), so the losses, gradients and skip decisions
// are the whole path's bit for bit wherever its products fit one binding.
#pragma once
#include <cstdint>
#include <optional>

#include "vkamp/buffer.hpp"
#include "vkamp/context.hpp"
#include "vkamp/graph/graph.hpp"
#include "vkamp/graph/precision_plan.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::train {

// Whether a Model runs its head in chunks and how many rows (tokens) each
// holds (0: chosen by bytes, LogitChunks::chunk_rows). Off keeps the whole
// logits in Model::output(): every model but a trainer's language model.
struct LogitChunking {
  bool on = false;
  uint32_t rows = 0;
  // On, as VKAMP_LOGIT_CHUNK says: auto (unset), off, or a row count.
  static LogitChunking from_env();
};

// The output node a model may run in chunks.
struct LogitHead {
  int weight = -1;  // the frozen weight's graph index, vocab x hidden
  uint32_t hidden = 0, vocab = 0, positions = 0;
  std::optional<quant::GgmlType> blocks;  // the weight held in ggml blocks (Tensor::blocks)
};

class LogitChunks {
 public:
  // Each chunk's logits (and again their gradient) stay within this and
  // one binding: 64 MiB a step for both, against 2 x 311 MB of whole
  // logits for Qwen2.5-0.5B at 4 x 256 tokens. A chunk keeps a hundred or
  // more rows of a 150k vocabulary, so its GEMM still has thousands of
  // tiles (Liger's rule, logits as large as the hidden states, would give
  // 8 rows and mostly empty 64-row tiles), and ten chunks cost ten times a
  // few dispatches.
  static constexpr uint64_t kChunkBytes = uint64_t(32) << 20;

  // g's output node where it can run in chunks: the last node, a linear
  // with no bias or activation whose weight is frozen, at O2 or O3 (every
  // step in the run's format). nullopt otherwise.
  static std::optional<LogitHead> find(const graph::Graph& g, graph::AmpLevel level);
  // Rows per chunk of `token_rows` rows: `forced`, or as many as
  // kChunkBytes and one binding hold, spread evenly over the chunks; a
  // whole number of rows that keeps each chunk's hidden states aligned
  // for a binding.
  static uint32_t chunk_rows(const Context& ctx, const LogitHead& head, Format fmt, uint32_t token_rows,
                             uint32_t forced);
  // What it holds on the device: one chunk's logits and their gradient.
  static uint64_t bytes(const LogitHead& head, Format fmt, uint32_t chunk_rows);

  // For up to max_token_rows rows (examples x positions); allocates.
  LogitChunks(Context& ctx, const LogitHead& head, Format fmt, uint32_t max_token_rows, uint32_t chunk_rows);

  // A training step's loss over `rows` token rows: loss[out_index] the
  // mean over the targets, row_loss the per-row losses and the count of
  // targets (ops::softmax_xent_scratch_bytes(rows)), dh = d(loss S)/dh
  // with S = scale[0], from h and the frozen weight w (vocab x hidden).
  void record_loss(Sequence& seq, BufferView w, BufferView h, BufferView labels, BufferView scale,
                   BufferView row_loss, BufferView loss, BufferView dh, uint32_t rows, uint32_t out_index);
  // Evaluation: correct[0] += the rows predicted right (when given) and
  // loss[out_index] = their mean loss (when given).
  void record_eval(Sequence& seq, BufferView w, BufferView h, BufferView labels, const BufferView* correct,
                   BufferView row_loss, const BufferView* loss, uint32_t rows, uint32_t out_index);

  uint32_t chunk_rows() const { return chunk_rows_; }
  uint64_t bytes() const { return bytes(head_, fmt_, chunk_rows_); }
  const LogitHead& head() const { return head_; }

 private:
  // logits_c = h_c W^T for rows [first, first + n) of `rows`.
  BufferView chunk_logits(Sequence& seq, BufferView w, BufferView h, uint32_t first, uint32_t n, uint32_t rows);

  LogitHead head_;
  Format fmt_;
  uint32_t max_rows_, chunk_rows_;
  Buffer logits_, dlogits_;
  Buffer unused_mean_;  // the first xent_mean's mean: only its count is wanted
};

}  // namespace vkamp::train
