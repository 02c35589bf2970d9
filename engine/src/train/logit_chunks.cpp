#include "vkamp/train/logit_chunks.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "vkamp/config_error.hpp"
#include "vkamp/error.hpp"
#include "vkamp/knobs.hpp"
#include "vkamp/ops/gemm.hpp"
#include "vkamp/ops/losses.hpp"

namespace vkamp::train {

LogitChunking LogitChunking::from_env() {
  const std::optional<std::string> v = env_text("VKAMP_LOGIT_CHUNK");
  if (!v || *v == "auto") return {true, 0};
  if (*v == "off") return {false, 0};
  if (v->find_first_not_of("0123456789") == std::string::npos && v->size() <= 9 && std::stoul(*v) > 0)
    return {true, uint32_t(std::stoul(*v))};
  throw ConfigError("VKAMP_LOGIT_CHUNK is auto, off or a number of rows above 0, not \"" + *v + "\"");
}

std::optional<LogitHead> LogitChunks::find(const graph::Graph& g, graph::AmpLevel level) {
  // O1 would run the head in fp32 beside 16-bit activations (casts); O0 is fp32 alone, O2 and O3 one format.
  if (level != graph::AmpLevel::O2 && level != graph::AmpLevel::O3) return std::nullopt;
  if (g.nodes().empty() || g.output_index() < 0) return std::nullopt;
  const graph::Node& n = g.nodes().back();
  if (n.name != g.output_tensor().name || n.op != "linear" || n.inputs.size() != 2) return std::nullopt;
  if (n.attrs.activate || n.attrs.dx_is_dz || n.attrs.dout_is_dz) return std::nullopt;
  const graph::Tensor& x = g.tensor(n.inputs[0]);
  const int w = g.tensor_index(n.inputs[1]);
  if (x.kind != graph::TensorKind::Activation || g.tensors()[w].kind != graph::TensorKind::Frozen) return std::nullopt;
  const graph::Shape& out = g.output_tensor().shape;
  return LogitHead{w, x.shape.c, out.c, out.positions(), g.tensors()[w].blocks};
}

uint32_t LogitChunks::chunk_rows(const Context& ctx, const LogitHead& head, Format fmt, uint32_t token_rows,
                                 uint32_t forced) {
  const uint64_t eb = format_bytes(fmt), row = uint64_t(head.vocab) * eb;
  const uint64_t binding = ctx.info().max_storage_range;
  if (row > binding)
    throw ConfigError("one row of logits takes " + std::to_string(row) + " bytes, more than " + ctx.info().name +
                      " binds at once (" + std::to_string(binding) + " bytes)");
  // Every chunk's hidden states and their gradient start where a binding may.
  const uint64_t align = std::max<uint64_t>(ctx.info().storage_offset_alignment, 1);
  const uint64_t h_row = uint64_t(head.hidden) * eb, granule = align / std::gcd(h_row, align);
  uint64_t rows = forced;
  if (!rows) {
    rows = std::max<uint64_t>(1, std::min(kChunkBytes, binding) / row);
    const uint64_t chunks = (token_rows + rows - 1) / rows;
    rows = (token_rows + chunks - 1) / std::max<uint64_t>(chunks, 1);  // even chunks
  }
  rows = (rows + granule - 1) / granule * granule;
  if (rows * row > binding) rows = binding / row / granule * granule;
  if (rows == 0)
    throw ConfigError("no whole number of logit rows fits one binding at the hidden states' alignment");
  return uint32_t(std::min<uint64_t>(rows, std::max(token_rows, 1u)));
}

uint64_t LogitChunks::bytes(const LogitHead& head, Format fmt, uint32_t chunk_rows) {
  return 2 * uint64_t(chunk_rows) * head.vocab * format_bytes(fmt);
}

LogitChunks::LogitChunks(Context& ctx, const LogitHead& head, Format fmt, uint32_t max_token_rows, uint32_t chunk_rows)
    : head_(head), fmt_(fmt), max_rows_(max_token_rows), chunk_rows_(chunk_rows),
      logits_(ctx, std::max<uint64_t>(bytes() / 2, 4), Memory::Device, "a chunk of logits"),
      dlogits_(ctx, std::max<uint64_t>(bytes() / 2, 4), Memory::Device, "their gradient"),
      unused_mean_(ctx, 4) {}

BufferView LogitChunks::chunk_logits(Sequence& seq, BufferView w, BufferView h, uint32_t first, uint32_t n,
                                     uint32_t rows) {
  const uint64_t eb = format_bytes(fmt_), h_row = uint64_t(head_.hidden) * eb;
  const BufferView logits(logits_, 0, uint64_t(n) * head_.vocab * eb);
  // As the whole head's linear_forward, its split planned for all rows.
  const ops::Gemm g{.m = n, .n = head_.vocab, .k = head_.hidden, .trans_b = true, .plan_rows = rows,
                    .b_blocks = head_.blocks};
  ops::gemm(seq, fmt_, g, BufferView(*h.buffer, h.offset + first * h_row, n * h_row), w, logits);
  return logits;
}

void LogitChunks::record_loss(Sequence& seq, BufferView w, BufferView h, BufferView labels, BufferView scale,
                              BufferView row_loss, BufferView loss, BufferView dh, uint32_t rows,
                              uint32_t out_index) {
  if (rows > max_rows_) throw Error("LogitChunks: " + std::to_string(rows) + " rows > " + std::to_string(max_rows_));
  const uint64_t eb = format_bytes(fmt_), h_row = uint64_t(head_.hidden) * eb;
  const uint32_t V = head_.vocab;
  // The gradient divides by the count of targets, which the whole path's
  // xent_mean writes after every row's loss: counted first here (the losses
  // it sums then are stale, and its mean goes nowhere).
  ops::xent_mean(seq, row_loss, labels, unused_mean_, rows, 0);
  for (uint32_t first = 0; first < rows; first += chunk_rows_) {
    const uint32_t n = std::min(chunk_rows_, rows - first);
    const BufferView logits = chunk_logits(seq, w, h, first, n, rows);
    const BufferView dlogits(dlogits_, 0, logits.bytes);
    ops::softmax_xent_rows(seq, fmt_, logits, labels, row_loss, first, n, rows, V);
    ops::softmax_xent_grad_rows(seq, fmt_, logits, labels, scale, row_loss, dlogits, first, n, rows, V);
    // As the whole head's linear_backward_input: dh is this node's alone.
    const ops::Gemm g{.m = n, .n = head_.hidden, .k = V, .plan_rows = rows, .b_blocks = head_.blocks};
    ops::gemm(seq, fmt_, g, dlogits, w, BufferView(*dh.buffer, dh.offset + first * h_row, n * h_row));
  }
  ops::xent_mean(seq, row_loss, labels, loss, rows, out_index);
}

void LogitChunks::record_eval(Sequence& seq, BufferView w, BufferView h, BufferView labels, const BufferView* correct,
                              BufferView row_loss, const BufferView* loss, uint32_t rows, uint32_t out_index) {
  if (rows > max_rows_) throw Error("LogitChunks: " + std::to_string(rows) + " rows > " + std::to_string(max_rows_));
  for (uint32_t first = 0; first < rows; first += chunk_rows_) {
    const uint32_t n = std::min(chunk_rows_, rows - first);
    const BufferView logits = chunk_logits(seq, w, h, first, n, rows);
    if (correct) ops::count_correct(seq, fmt_, logits, labels, *correct, n, head_.vocab, first);
    if (loss) ops::softmax_xent_rows(seq, fmt_, logits, labels, row_loss, first, n, rows, head_.vocab);
  }
  if (loss) ops::xent_mean(seq, row_loss, labels, *loss, rows, out_index);
}

}  // namespace vkamp::train
