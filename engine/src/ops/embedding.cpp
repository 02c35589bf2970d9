#include "vkamp/ops/dequantize.hpp"
#include "vkamp/ops/embedding.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>

#include "vkamp/gpu_abi/embedding.h"
#include "vkamp/gpu_abi/embedding_grad.h"
#include "op_util.hpp"
#include "vkamp/error.hpp"

namespace vkamp::ops {

namespace {

void check(const char* op, uint32_t rows, uint32_t seq_len, uint32_t cols, uint32_t vocab) {
  if (seq_len == 0 || cols == 0 || vocab == 0) throw Error(std::string(op) + ": seq_len, cols and vocab must be >= 1");
  if (rows % seq_len != 0) throw Error(std::string(op) + ": rows must be a multiple of seq_len");
  if (uint64_t(rows) * cols > UINT32_MAX || uint64_t(vocab) * cols > UINT32_MAX)
    throw Error(std::string(op) + ": more than 2^32 values");
}

// Rows per invocation of the gradients' first pass: few enough for
// lavapipe's 65535-iteration loop limit.
constexpr uint32_t kChunkRows = 1024;

// The tokens pass scatters (embedding_grad.comp SCATTER) on CPU drivers and
// scans elsewhere, the same bits either way; KernelPaths::embedding_scatter
// overrides, for tests. A scattering invocation loops vocab + kChunkRows
// times, so large vocabularies scan (lavapipe's 65535-iteration limit).
bool scatter(const Context& ctx, uint32_t vocab) {
  return ctx.paths().embedding_scatter.value_or(ctx.info().type == VK_PHYSICAL_DEVICE_TYPE_CPU) &&
         uint64_t(vocab) + kChunkRows < 60000;
}

}  // namespace

void embedding_forward(Sequence& seq, Format fmt, BufferView ids, BufferView wte, std::optional<BufferView> wpe, BufferView y,
                       uint32_t rows, uint32_t seq_len, uint32_t cols, uint32_t vocab,
                       std::optional<quant::GgmlType> wte_blocks) {
  size_t eb = format_bytes(fmt);
  check("embedding_forward", rows, seq_len, cols, vocab);
  detail::require("embedding_forward", "ids", ids, rows, sizeof(uint32_t));
  // A row of the table: cols values in the format, or in blocks.
  const uint64_t row_bytes = wte_blocks ? quant::ggml_row_bytes(*wte_blocks, cols) : uint64_t(cols) * eb;
  if (wte_blocks && cols % quant::ggml_type_info(*wte_blocks).block_values != 0)
    throw Error("embedding_forward: rows of " + std::to_string(cols) + " are not whole " +
                quant::ggml_type_info(*wte_blocks).name + " blocks");
  detail::require("embedding_forward", "wte", wte, uint64_t(vocab) * row_bytes, 1);
  if (wpe) detail::require("embedding_forward", "wpe", *wpe, uint64_t(seq_len) * cols, eb);
  detail::require("embedding_forward", "y", y, uint64_t(rows) * cols, eb);
  uint32_t n = rows * cols;
  if (n == 0) return;
  // Without positions, wte stands in for the wpe the shader does not read.
  std::vector<uint32_t> constants{uint32_t(wpe.has_value())};
  if (wte_blocks) constants = with_quant_type(std::move(constants), *wte_blocks);
  auto k = detail::kernel<shader::EmbeddingShader>(seq, fmt, constants, wte_blocks ? ".quant" : "");
  // A table larger than one binding (a real vocabulary's, wide): one pass
  // over the tokens per view of its rows, each writing its ids' rows.
  detail::for_each_binding_chunk(seq.context(), "embedding_forward", row_bytes, vocab, [&](uint32_t first, uint32_t m) {
    const shader::EmbeddingPush push{n,     cols, seq_len, vocab, detail::fast_divisor(cols), detail::fast_divisor(seq_len),
                                     first, m};
    const BufferView table = detail::row_view(wte, row_bytes, first, m);
    seq.dispatch(k, {ids, table, wpe.value_or(table), y}, push, detail::grid_stride_groups(n), "embedding");
  });
}

void embedding_backward(Sequence& seq, Format fmt, BufferView ids, BufferView dy, BufferView dwte,
                        std::optional<BufferView> dwpe,
                        uint32_t rows, uint32_t seq_len, uint32_t cols, uint32_t vocab, EmbeddingAccumulate accumulate) {
  size_t eb = format_bytes(fmt);
  check("embedding_backward", rows, seq_len, cols, vocab);
  detail::require("embedding_backward", "ids", ids, rows, sizeof(uint32_t));
  detail::require("embedding_backward", "dy", dy, uint64_t(rows) * cols, eb);
  detail::require("embedding_backward", "dwte", dwte, uint64_t(vocab) * cols, eb);
  if (dwpe) detail::require("embedding_backward", "dwpe", *dwpe, uint64_t(seq_len) * cols, eb);
  // The same shader twice: TOKENS groups the rows by id, else by position.
  // Rows (tokens) or batches (positions) in chunks of kChunkRows, a partial
  // sum per chunk, then the chunks added in order by gemm_reduce.
  // A token table larger than one binding (a real vocabulary's, wide) is
  // summed in views of its rows, each view's partials one binding too.
  const Context& ctx = seq.context();
  for (uint32_t tokens : {1u, 0u}) {
    if (!tokens && !dwpe) continue;
    const uint32_t keys = tokens ? vocab : seq_len;
    uint32_t chunks = std::max(1u, div_up(tokens ? rows : rows / seq_len, kChunkRows));
    if (chunks > 65535) throw Error("embedding_backward: more than " + std::to_string(65535ull * kChunkRows) + " rows");
    // Rows per view: the partials' (chunks fp32 rows of cols each) fit a
    // binding, and the gradient's view starts aligned for one.
    const uint64_t out_row = uint64_t(cols) * eb, align = std::max<uint64_t>(ctx.info().storage_offset_alignment, 1);
    const uint64_t granule = align / std::gcd(out_row, align);
    const uint32_t step = uint32_t(std::max<uint64_t>(
        granule, std::min<uint64_t>(detail::rows_per_binding(ctx, "embedding_backward", out_row),
                                    detail::rows_per_binding(ctx, "embedding_backward", uint64_t(chunks) * cols * 4)) /
                     granule * granule));
    const bool sc = tokens && scatter(ctx, vocab);
    auto k = detail::kernel<shader::EmbeddingGradShader>(seq, fmt, {tokens, sc});
    for (uint32_t first = 0; first < keys; first += step) {
      const uint32_t m = std::min(step, keys - first), n = m * cols;
      Sequence::ScratchScope scope(seq);
      BufferView partial = seq.scratch(size_t(chunks) * n * sizeof(float));
      const shader::EmbeddingGradPush push{n, cols, rows, seq_len, kChunkRows, first};
      seq.dispatch(k, {ids, dy, partial}, push, {sc ? div_up(cols, 256) : detail::grid_stride_groups(n).x, chunks},
                   tokens ? "embedding_grad_tokens" : "embedding_grad_positions");
      detail::add_partials(seq, fmt, partial, detail::row_view(tokens ? dwte : *dwpe, out_row, first, m), n, chunks,
                           tokens ? accumulate.wte : accumulate.wpe, "embedding_grad_reduce");
    }
  }
}

}  // namespace vkamp::ops
